package framework

import (
	"context"
	"syscall"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// A killed kube-apiserver is unreachable until Revive starts it again on
// the same address, and the data in etcd outlives it; a frozen etcd holds
// writes until it is thawed; a stopped etcd comes back with its data.
func TestControlPlaneFaults(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a control plane")
	}
	c := New(t, Options{})
	ctx := t.Context()
	create := func(name string, timeout time.Duration) error {
		cctx, cancel := context.WithTimeout(ctx, timeout)
		defer cancel()
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name}}
		_, err := c.Clientset.CoreV1().ConfigMaps("default").Create(cctx, cm, metav1.CreateOptions{})
		return err
	}
	exists := func(name string) {
		t.Helper()
		if _, err := c.Clientset.CoreV1().ConfigMaps("default").Get(ctx, name, metav1.GetOptions{}); err != nil {
			t.Errorf("ConfigMap %s: %v", name, err)
		}
	}
	if err := create("before", 10*time.Second); err != nil {
		t.Fatal(err)
	}

	if err := c.Kill(APIServer, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	if err := create("while-down", 2*time.Second); err == nil {
		t.Error("a create succeeded while kube-apiserver was down")
	}
	if !c.Down(APIServer) || c.Down(Etcd) {
		t.Errorf("Down: kube-apiserver %v, etcd %v after kube-apiserver was killed", c.Down(APIServer), c.Down(Etcd))
	}
	if err := c.Revive(ctx, APIServer); err != nil {
		t.Fatal(err)
	}
	if c.Down(APIServer) {
		t.Error("Down: kube-apiserver still down after Revive")
	}
	if err := c.Revive(ctx, APIServer); err == nil {
		t.Error("Revive started kube-apiserver a second time")
	}
	exists("before")

	thaw, err := c.Freeze(Etcd)
	if err != nil {
		t.Fatal(err)
	}
	if err := create("while-frozen", 2*time.Second); err == nil {
		t.Error("a create succeeded while etcd was frozen")
	}
	if err := thaw(); err != nil {
		t.Fatal(err)
	}

	// A shutdown this time, as a maintenance stops it.
	if err := c.Kill(Etcd, syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if !c.Down(Etcd) {
		t.Error("Down: etcd not down after it was stopped")
	}
	if err := c.Revive(ctx, Etcd); err != nil {
		t.Fatal(err)
	}
	if err := create("after", 30*time.Second); err != nil {
		t.Fatal(err)
	}
	exists("before")
	if err := c.Healthy(); err != nil {
		t.Fatal(err)
	}
}

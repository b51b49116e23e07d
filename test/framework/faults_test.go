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
func TestControlPlaneFaultsHealWithTheirData(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a control plane")
	}
	f := faultProbe{t: t, c: New(t, Options{})}
	if err := f.create("before", 10*time.Second); err != nil {
		t.Fatal(err)
	}
	f.killAPIServerAndRevive()
	f.exists("before")
	f.freezeEtcdAndThaw()
	f.stopEtcdAndRevive()
	if err := f.create("after", 30*time.Second); err != nil {
		t.Fatal(err)
	}
	f.exists("before")
	if err := f.c.Healthy(); err != nil {
		t.Fatal(err)
	}
}

// faultProbe writes and reads ConfigMaps in default around the faults.
type faultProbe struct {
	t *testing.T
	c *Cluster
}

func (f faultProbe) create(name string, timeout time.Duration) error {
	ctx, cancel := context.WithTimeout(f.t.Context(), timeout)
	defer cancel()
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name}}
	_, err := f.c.Clientset.CoreV1().ConfigMaps("default").Create(ctx, cm, metav1.CreateOptions{})
	return err
}

func (f faultProbe) exists(name string) {
	f.t.Helper()
	if _, err := f.c.Clientset.CoreV1().ConfigMaps("default").Get(f.t.Context(), name, metav1.GetOptions{}); err != nil {
		f.t.Errorf("ConfigMap %s: %v", name, err)
	}
}

// killAPIServerAndRevive checks that a killed kube-apiserver takes no
// write, is down while etcd is not, and is revived once only.
func (f faultProbe) killAPIServerAndRevive() {
	t, c := f.t, f.c
	if err := c.Kill(APIServer, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	if err := f.create("while-down", 2*time.Second); err == nil {
		t.Error("a create succeeded while kube-apiserver was down")
	}
	if !c.Down(APIServer) || c.Down(Etcd) {
		t.Errorf("Down: kube-apiserver %v, etcd %v after kube-apiserver was killed", c.Down(APIServer), c.Down(Etcd))
	}
	if err := c.Revive(t.Context(), APIServer); err != nil {
		t.Fatal(err)
	}
	if c.Down(APIServer) {
		t.Error("Down: kube-apiserver still down after Revive")
	}
	if err := c.Revive(t.Context(), APIServer); err == nil {
		t.Error("Revive started kube-apiserver a second time")
	}
}

// freezeEtcdAndThaw checks that a frozen etcd takes no write.
func (f faultProbe) freezeEtcdAndThaw() {
	thaw, err := f.c.Freeze(Etcd)
	if err != nil {
		f.t.Fatal(err)
	}
	if err := f.create("while-frozen", 2*time.Second); err == nil {
		f.t.Error("a create succeeded while etcd was frozen")
	}
	if err := thaw(); err != nil {
		f.t.Fatal(err)
	}
}

// stopEtcdAndRevive stops etcd with SIGTERM, as a maintenance stops it, and
// checks that it is down until revived.
func (f faultProbe) stopEtcdAndRevive() {
	if err := f.c.Kill(Etcd, syscall.SIGTERM); err != nil {
		f.t.Fatal(err)
	}
	if !f.c.Down(Etcd) {
		f.t.Error("Down: etcd not down after it was stopped")
	}
	if err := f.c.Revive(f.t.Context(), Etcd); err != nil {
		f.t.Fatal(err)
	}
}

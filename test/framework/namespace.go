package framework

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/kyma-project/kim-snatch/test/framework/poll"
)

// namespaceGone bounds the wait for a test's namespace to be deleted: the
// namespace controller deletes its Pods first, and the kubelet stops their
// containers within their grace period.
const namespaceGone = 2 * time.Minute

// Namespace creates a namespace of the test's own, named prefix and a
// suffix the API server generates, with labels, and deletes it when the
// test ends. The deletion waits until the namespace is gone, so that its
// Pods no longer take up Node capacity when the next test starts; that
// needs kube-controller-manager's namespace controller, which every
// cluster of a node suite runs.
func Namespace(t testing.TB, cs kubernetes.Interface, prefix string, labels map[string]string) string {
	t.Helper()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: prefix + "-", Labels: labels}}
	got, err := cs.CoreV1().Namespaces().Create(t.Context(), ns, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("create a namespace %s-…: %v", prefix, err)
	}
	t.Cleanup(func() {
		if err := DeleteNamespace(context.Background(), cs, got.Name); err != nil {
			t.Error(err)
		}
	})
	return got.Name
}

// DeleteNamespace deletes namespace name and waits until it is gone.
func DeleteNamespace(ctx context.Context, cs kubernetes.Interface, name string) error {
	err := cs.CoreV1().Namespaces().Delete(ctx, name, metav1.DeleteOptions{})
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("delete namespace %s: %w", name, err)
	}
	var last *corev1.Namespace
	return poll.Until(ctx, "namespace "+name+" to be gone", func(ctx context.Context) error {
		got, err := cs.CoreV1().Namespaces().Get(ctx, name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return nil
		}
		if err == nil {
			last = got
		}
		return errors.New(describeNamespace(last, err))
	}, poll.Timeout(namespaceGone))
}

// describeNamespace says what a namespace that is not gone still shows:
// its phase and the conditions the namespace controller set on it.
func describeNamespace(ns *corev1.Namespace, err error) string {
	if ns == nil {
		return fmt.Sprintf("nothing (%v)", err)
	}
	s := string(ns.Status.Phase)
	for _, c := range ns.Status.Conditions {
		if c.Status == corev1.ConditionTrue {
			s += fmt.Sprintf("; %s: %s", c.Type, c.Message)
		}
	}
	return s
}

package stack

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/kyma-project/kim-snatch/test/framework"
	"github.com/kyma-project/kim-snatch/test/framework/poll"
)

// WaitAdmits waits until the API server calls the webhook for a Kyma Pod:
// a Pod created with dry-run in a Kyma-managed namespace comes back with
// exactly one term for the Kyma pool.
//
// Rolled-out Deployments and a written caBundle are not enough. The API
// server reads the new caBundle from its informer, and reaches a new
// replica only once kube-proxy has its endpoint; until then the webhook's
// failurePolicy Ignore admits Kyma Pods without the term.
func WaitAdmits(ctx context.Context, cs kubernetes.Interface, timeout time.Duration) error {
	ns := fmt.Sprintf("kim-snatch-probe-%d", time.Now().UnixNano())
	if err := CreateNamespace(ctx, cs, ns, true); err != nil {
		return fmt.Errorf("create namespace %s: %w", ns, err)
	}
	defer func() { _ = cs.CoreV1().Namespaces().Delete(context.WithoutCancel(ctx), ns, metav1.DeleteOptions{}) }()
	probe := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{GenerateName: "probe-"},
		Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: PauseImage}}},
	}
	return poll.Until(ctx, "the webhook to admit Kyma Pods", func(ctx context.Context) error {
		p, err := cs.CoreV1().Pods(ns).Create(ctx, probe, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
		if err != nil {
			return err
		}
		if n := framework.PoolTerms(p, framework.KymaPool); n != 1 {
			return fmt.Errorf("a dry-run Pod came back with %d terms for pool %s", n, framework.KymaPool)
		}
		return nil
	}, poll.Timeout(timeout))
}

package stack

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"

	"github.com/kyma-project/kim-snatch/test/framework"
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
	var last string
	err := wait.PollUntilContextTimeout(ctx, time.Second, timeout, true, func(ctx context.Context) (bool, error) {
		p, err := cs.CoreV1().Pods(ns).Create(ctx, probe, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
		switch {
		case err != nil:
			last = err.Error()
		case framework.PoolTerms(p, framework.KymaPool) != 1:
			last = fmt.Sprintf("a dry-run Pod came back with %d terms for pool %s", framework.PoolTerms(p, framework.KymaPool), framework.KymaPool)
		default:
			return true, nil
		}
		return false, nil
	})
	if err != nil {
		return fmt.Errorf("the webhook does not admit Kyma Pods within %s (last: %s): %w", timeout, last, err)
	}
	return nil
}

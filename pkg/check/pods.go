package check

import (
	"context"
	"fmt"
	"slices"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// checkWebhookPods counts the webhook Pods that can serve. With
// failurePolicy Ignore the API server admits Pods without the affinity
// while no replica answers, so zero is a failure; fewer than the minimum
// is one eviction or rollout away from it.
func checkWebhookPods(ctx context.Context, client kubernetes.Interface, cfg Config) Result {
	list, err := client.CoreV1().Pods(cfg.Namespace).List(ctx, metav1.ListOptions{LabelSelector: cfg.WebhookSelector.String()})
	switch {
	case apierrors.IsForbidden(err):
		return notPermitted(IDWebhookPods, "list Pods in "+cfg.Namespace, err)
	case err != nil:
		return readFailure(IDWebhookPods, fmt.Sprintf("Pods %s in %s", cfg.WebhookSelector, cfg.Namespace), err)
	}
	return webhookPodsResult(cfg, list.Items)
}

// webhookPodsResult judges the listed webhook Pods.
func webhookPodsResult(cfg Config, pods []corev1.Pod) Result {
	describe := fmt.Sprintf("kubectl -n %s describe pods -l %s", cfg.Namespace, cfg.WebhookSelector)
	if len(pods) == 0 {
		return Result{
			ID:          IDWebhookPods,
			Status:      StatusFail,
			Message:     fmt.Sprintf("no Pods match %s in namespace %s; Pods in Kyma namespaces are created without the affinity", cfg.WebhookSelector, cfg.Namespace),
			Remediation: fmt.Sprintf("Deploy the webhook (kubectl apply -k deploy/webhook) and check the Deployment: kubectl -n %s get deployment,replicaset -l %s; or fix --webhook-selector.", cfg.Namespace, cfg.WebhookSelector),
		}
	}
	var ready, notReady []string
	for i := range pods {
		p := &pods[i]
		if why := notReadyReason(p); why != "" {
			notReady = append(notReady, fmt.Sprintf("%s (%s)", p.Name, why))
			continue
		}
		ready = append(ready, p.Name)
	}
	slices.Sort(ready)
	slices.Sort(notReady)
	counts := fmt.Sprintf("%d of %d webhook Pods ready in %s (minimum %d)", len(ready), len(pods), cfg.Namespace, cfg.MinReadyWebhooks)
	switch {
	case len(ready) >= cfg.MinReadyWebhooks:
		msg := counts + ": " + listNames(ready)
		if len(notReady) > 0 {
			msg += "; not ready: " + listNames(notReady)
		}
		return Result{ID: IDWebhookPods, Status: StatusPass, Message: msg}
	case len(ready) > 0:
		return Result{
			ID:          IDWebhookPods,
			Status:      StatusWarn,
			Message:     counts + "; not ready: " + listNames(notReady),
			Remediation: fmt.Sprintf("One more disruption leaves no replica to call; find out why the others are not ready: %s.", describe),
		}
	default:
		return Result{
			ID:          IDWebhookPods,
			Status:      StatusFail,
			Message:     counts + "; not ready: " + listNames(notReady) + "; Pods in Kyma namespaces are created without the affinity",
			Remediation: fmt.Sprintf("Find out why no replica is ready (events, probes, the certificate Secret mount): %s.", describe),
		}
	}
}

// notReadyReason says why a Pod cannot serve, or "" when it can: it runs,
// its Ready condition is true (the webhook's /readyz passes only once it
// has loaded a certificate), and it is not shutting down.
func notReadyReason(p *corev1.Pod) string {
	switch {
	case p.DeletionTimestamp != nil:
		return "terminating"
	case podPhase(p) != corev1.PodRunning:
		return string(podPhase(p))
	}
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady {
			if c.Status == corev1.ConditionTrue {
				return ""
			}
			if c.Reason != "" {
				return "Running, not Ready: " + c.Reason
			}
			return "Running, not Ready"
		}
	}
	return "Running, no Ready condition"
}

package check

import (
	"context"
	"fmt"
	"slices"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// checkWebhookPods counts the webhook Pods that can serve. With
// failurePolicy Ignore the API server admits Pods without the affinity
// while no replica answers, so zero is a failure; fewer than the minimum
// is one eviction or rollout away from it.
func checkWebhookPods(ctx context.Context, client kubernetes.Interface, cfg Config) Result {
	list, err := client.CoreV1().Pods(cfg.Namespace).List(ctx, metav1.ListOptions{LabelSelector: cfg.WebhookSelector.String()})
	if res, failed := unreadable(IDWebhookPods, "list Pods in "+cfg.Namespace, fmt.Sprintf("Pods %s in %s", cfg.WebhookSelector, cfg.Namespace), err); failed {
		return res
	}
	if len(list.Items) == 0 {
		return fail(IDWebhookPods, fmt.Sprintf("no Pods match %s in namespace %s; Pods in Kyma namespaces are created without the affinity", cfg.WebhookSelector, cfg.Namespace),
			fmt.Sprintf("Deploy the webhook (kubectl apply -k deploy/webhook) and check the Deployment: kubectl -n %s get deployment,replicaset -l %s; or fix --webhook-selector.", cfg.Namespace, cfg.WebhookSelector))
	}
	var ready, notReady []string
	for i := range list.Items {
		p := &list.Items[i]
		if why := notReadyReason(p); why != "" {
			notReady = append(notReady, fmt.Sprintf("%s (%s)", p.Name, why))
		} else {
			ready = append(ready, p.Name)
		}
	}
	slices.Sort(ready)
	slices.Sort(notReady)
	msg := fmt.Sprintf("%d of %d webhook Pods ready in %s (minimum %d)", len(ready), len(list.Items), cfg.Namespace, cfg.MinReadyWebhooks)
	describe := fmt.Sprintf("kubectl -n %s describe pods -l %s", cfg.Namespace, cfg.WebhookSelector)
	switch {
	case len(ready) >= cfg.MinReadyWebhooks:
		msg += ": " + listNames(ready)
		if len(notReady) > 0 {
			msg += "; not ready: " + listNames(notReady)
		}
		return pass(IDWebhookPods, msg)
	case len(ready) > 0:
		return warn(IDWebhookPods, msg+"; not ready: "+listNames(notReady),
			"One more disruption leaves no replica to call; find out why the others are not ready: "+describe+".")
	}
	return fail(IDWebhookPods, msg+"; not ready: "+listNames(notReady)+"; Pods in Kyma namespaces are created without the affinity",
		"Find out why no replica is ready (events, probes, the certificate Secret mount): "+describe+".")
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
	i := slices.IndexFunc(p.Status.Conditions, func(c corev1.PodCondition) bool { return c.Type == corev1.PodReady })
	switch {
	case i < 0:
		return "Running, no Ready condition"
	case p.Status.Conditions[i].Status == corev1.ConditionTrue:
		return ""
	case p.Status.Conditions[i].Reason != "":
		return "Running, not Ready: " + p.Status.Conditions[i].Reason
	}
	return "Running, not Ready"
}

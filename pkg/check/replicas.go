package check

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apiserver/pkg/authentication/serviceaccount"
	"k8s.io/client-go/kubernetes"

	"github.com/kyma-project/kim-snatch/pkg/cabundle"
	"github.com/kyma-project/kim-snatch/pkg/syncer"
)

// checkWebhookPods counts the webhook Pods that can serve. With failurePolicy
// Ignore the API server admits Pods without the affinity while no replica
// answers, so zero fails; fewer than the minimum is one eviction away.
func checkWebhookPods(ctx context.Context, client kubernetes.Interface, cfg Config) Result {
	list, err := client.CoreV1().Pods(cfg.Namespace).List(ctx, metav1.ListOptions{LabelSelector: cfg.WebhookSelector.String()})
	if res, failed := unreadable(IDWebhookPods, "list Pods in "+cfg.Namespace, fmt.Sprintf("Pods %s in %s", cfg.WebhookSelector, cfg.Namespace), err); failed {
		return res
	}
	if len(list.Items) == 0 {
		return fail(IDWebhookPods, fmt.Sprintf("no Pods match %s in namespace %s; Pods in Kyma namespaces are created without the affinity", cfg.WebhookSelector, cfg.Namespace),
			fmt.Sprintf("Check the Deployment: kubectl -n %s get deployment,replicaset -l %s; if it is gone, %s; or fix --webhook-selector.", cfg.Namespace, cfg.WebhookSelector, reinstall("snatch-webhook")))
	}
	var ready, notReady []string
	for i := range list.Items {
		if why := notReadyReason(&list.Items[i]); why != "" {
			notReady = append(notReady, fmt.Sprintf("%s (%s)", list.Items[i].Name, why))
		} else {
			ready = append(ready, list.Items[i].Name)
		}
	}
	slices.Sort(ready)
	slices.Sort(notReady)
	msg := fmt.Sprintf("%d of %d webhook Pods ready in %s (minimum %d)", len(ready), len(list.Items), cfg.Namespace, cfg.MinReadyWebhooks)
	describe := fmt.Sprintf("kubectl -n %s describe pods -l %s", cfg.Namespace, cfg.WebhookSelector)
	switch {
	case len(ready) >= cfg.MinReadyWebhooks && len(notReady) > 0:
		return pass(IDWebhookPods, msg+": "+listNames(ready)+"; not ready: "+listNames(notReady))
	case len(ready) >= cfg.MinReadyWebhooks:
		return pass(IDWebhookPods, msg+": "+listNames(ready))
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
	i := slices.IndexFunc(p.Status.Conditions, func(c corev1.PodCondition) bool { return c.Type == corev1.PodReady })
	switch {
	case p.DeletionTimestamp != nil:
		return "terminating"
	case podPhase(p) != corev1.PodRunning:
		return string(podPhase(p))
	case i < 0:
		return "Running, no Ready condition"
	case p.Status.Conditions[i].Status == corev1.ConditionTrue:
		return ""
	case p.Status.Conditions[i].Reason != "":
		return "Running, not Ready: " + p.Status.Conditions[i].Reason
	}
	return "Running, not Ready"
}

func podPhase(p *corev1.Pod) corev1.PodPhase { return cmp.Or(p.Status.Phase, corev1.PodUnknown) }

// checkSyncerLease fails on an empty or expired Lease: a replica that shuts
// down releases it and a standby takes it within a retry period, so then no
// replica is there to take it.
func checkSyncerLease(ctx context.Context, client kubernetes.Interface, cfg Config, now time.Time) Result {
	what := fmt.Sprintf("Lease %s/%s", cfg.LeaderElectionNamespace, cfg.LeaderElectionID)
	syncerPods := fmt.Sprintf("kubectl -n %s get pods -l app.kubernetes.io/name=cabundle-syncer", cfg.Namespace)
	lease, err := client.CoordinationV1().Leases(cfg.LeaderElectionNamespace).Get(ctx, cfg.LeaderElectionID, metav1.GetOptions{})
	switch {
	case apierrors.IsNotFound(err):
		return fail(IDSyncerLease, what+" not found: it ships with cabundle-syncer and the syncer may not create it, so no replica can lead and nothing keeps the caBundle in step with the CA",
			fmt.Sprintf("Re-create it: %s, which ships the Lease; or fix --leader-election-namespace/--leader-election-id. Then check %s.", reinstall("cabundle-syncer"), syncerPods))
	case err != nil:
		res, _ := unreadable(IDSyncerLease, fmt.Sprintf("get Lease %s/%s", cfg.LeaderElectionNamespace, cfg.LeaderElectionID), what, err)
		return res
	case lease.Spec.HolderIdentity == nil || *lease.Spec.HolderIdentity == "":
		return fail(IDSyncerLease, what+" has no holder: the last leader released it and no replica took it; nothing keeps the caBundle in step with the CA",
			fmt.Sprintf("Check that the syncer Deployment has running replicas and read their logs: %s.", syncerPods))
	case lease.Spec.RenewTime == nil || lease.Spec.LeaseDurationSeconds == nil:
		return fail(IDSyncerLease, fmt.Sprintf("%s held by %s has no renewTime or leaseDurationSeconds, so its term cannot be told", what, *lease.Spec.HolderIdentity),
			fmt.Sprintf(`Clear its holder so that a syncer replica takes it (kubectl -n %s patch lease %s --type=merge -p '{"spec":{"holderIdentity":null}}') and check %s.`, cfg.LeaderElectionNamespace, cfg.LeaderElectionID, syncerPods))
	}
	holder := *lease.Spec.HolderIdentity
	renewed := lease.Spec.RenewTime.Time
	expires := renewed.Add(time.Duration(*lease.Spec.LeaseDurationSeconds) * time.Second)
	if expires.Before(now) {
		return fail(IDSyncerLease, fmt.Sprintf("%s held by %s expired at %s (renewed %s, duration %ds): the leader stopped renewing and no replica took over",
			what, holder, cabundle.FormatTime(expires), cabundle.FormatTime(renewed), *lease.Spec.LeaseDurationSeconds),
			fmt.Sprintf("Check that the syncer replicas run and can reach the API server, and read their logs: %s.", syncerPods))
	}
	live := fmt.Sprintf("%s held by %s, renewed %s, valid until %s", what, holder, cabundle.FormatTime(renewed), cabundle.FormatTime(expires))
	// A holder without a running Pod renews the Lease from somewhere, such as
	// an old replica with a hostname identity or a process outside the
	// cluster: the caBundle may well be kept, so that only warns.
	podName := syncer.HolderPodName(holder)
	pod, err := client.CoreV1().Pods(cfg.Namespace).Get(ctx, podName, metav1.GetOptions{})
	switch {
	case apierrors.IsNotFound(err):
		return warn(IDSyncerLease, fmt.Sprintf("%s, but Pod %s/%s does not exist; the leader runs elsewhere", live, cfg.Namespace, podName),
			fmt.Sprintf("Find the process that holds the Lease as %s; a syncer in this cluster sets POD_NAME (its Deployment does) and runs in --namespace %s.", holder, cfg.Namespace))
	case denied(err):
		// The Lease shows a leader renewing its term, but whether its Pod
		// runs was not seen; see notPermitted.
		op := "get Pods in " + cfg.Namespace
		return result(IDSyncerLease, StatusSkip, fmt.Sprintf("%s; its Pod %s/%s was not looked at: these credentials may not get Pods: %v", live, cfg.Namespace, podName, err),
			permittedRemediation(op))
	case err != nil:
		return readFailure(IDSyncerLease, fmt.Sprintf("Pod %s/%s, the holder of %s", cfg.Namespace, podName, what), err)
	}
	if res, ok := checkSyncerMayPatch(ctx, client, cfg, pod, live); !ok {
		return res
	}
	may := fmt.Sprintf("%s; its ServiceAccount %s may patch MutatingWebhookConfiguration %s", live, syncerUser(pod), cfg.WebhookConfiguration)
	if podPhase(pod) != corev1.PodRunning || pod.DeletionTimestamp != nil {
		state := string(podPhase(pod))
		if pod.DeletionTimestamp != nil {
			state += ", terminating"
		}
		return warn(IDSyncerLease, fmt.Sprintf("%s, but its Pod %s/%s is %s", may, cfg.Namespace, podName, state),
			fmt.Sprintf("A standby takes over once the Lease expires; if none does, check the syncer replicas: kubectl -n %s describe pod %s.", cfg.Namespace, podName))
	}
	return pass(IDSyncerLease, fmt.Sprintf("%s; Pod %s/%s is Running", may, cfg.Namespace, podName))
}

// checkSyncerMayPatch asks the API server's authorizer whether the leader's
// ServiceAccount may patch the MWC, the one write of the syncer. It writes
// only when the CA changes, so a lost binding or a narrowed role shows
// nowhere else until the next rotation, whose caBundle then never arrives
// and the API server stops trusting the webhook. It returns false with the
// item's result when the answer is not yes.
func checkSyncerMayPatch(ctx context.Context, client kubernetes.Interface, cfg Config, pod *corev1.Pod, live string) (Result, bool) {
	user := syncerUser(pod)
	sar := &authorizationv1.SubjectAccessReview{Spec: authorizationv1.SubjectAccessReviewSpec{
		User:   user,
		Groups: serviceaccount.MakeGroupNames(pod.Namespace),
		ResourceAttributes: &authorizationv1.ResourceAttributes{
			Verb: "patch", Group: admissionregistrationv1.GroupName, Version: "v1",
			Resource: "mutatingwebhookconfigurations", Name: cfg.WebhookConfiguration,
		},
	}}
	what := fmt.Sprintf("may %s patch MutatingWebhookConfiguration %s", user, cfg.WebhookConfiguration)
	got, err := client.AuthorizationV1().SubjectAccessReviews().Create(ctx, sar, metav1.CreateOptions{})
	switch {
	case denied(err):
		op := "create SubjectAccessReviews"
		return result(IDSyncerLease, StatusSkip, fmt.Sprintf("%s; whether its ServiceAccount may patch the MWC was not asked: these credentials may not %s: %v", live, op, err),
			permittedRemediation(op)), false
	case err != nil:
		return fail(IDSyncerLease, fmt.Sprintf("%s; could not ask the API server %s: %v", live, what, err),
			"Check the connection to the API server and rerun check."), false
	case !got.Status.Allowed:
		return fail(IDSyncerLease, fmt.Sprintf("%s, but its ServiceAccount %s may not patch MutatingWebhookConfiguration %s (%s): the next CA rotation never reaches the caBundle, and the API server then stops trusting the webhook",
			live, user, cfg.WebhookConfiguration, cmp.Or(got.Status.Reason, got.Status.EvaluationError, "no rule allows it")),
			"Restore the syncer's RBAC, the ClusterRole and ClusterRoleBinding cabundle-syncer: "+reinstall("cabundle-syncer")+"; kubectl auth can-i patch mutatingwebhookconfigurations/"+cfg.WebhookConfiguration+" --as="+user+" then answers yes."), false
	}
	return Result{}, true
}

// syncerUser is the user name of the Pod's ServiceAccount; a Pod that names
// none runs as default, which the API server fills in on create.
func syncerUser(p *corev1.Pod) string {
	return serviceaccount.MakeUsername(p.Namespace, cmp.Or(p.Spec.ServiceAccountName, "default"))
}

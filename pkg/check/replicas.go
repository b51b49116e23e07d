package check

import (
	"cmp"
	"context"
	"slices"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apiserver/pkg/authentication/serviceaccount"
	"k8s.io/client-go/kubernetes"

	"github.com/kyma-project/kim-snatch/pkg/syncer"
)

// podsFacts are what webhook-pods found: the webhook Pods that match,
// those ready and those not, with why.
type podsFacts struct {
	Config
	Total    int
	Ready    []string
	NotReady []podState
}

// podState is a Pod that cannot serve, and why.
type podState struct{ Name, Why string }

// checkWebhookPods counts the webhook Pods that can serve. With failurePolicy
// Ignore the API server admits Pods without the affinity while no replica
// answers, so zero fails; fewer than the minimum is one eviction away.
func checkWebhookPods(ctx context.Context, client kubernetes.Interface, cfg Config) Result {
	return decideWebhookPods(ctx, client, cfg).result(IDWebhookPods)
}

func decideWebhookPods(ctx context.Context, client kubernetes.Interface, cfg Config) found {
	list, err := client.CoreV1().Pods(cfg.Namespace).List(ctx, webhookPods(cfg))
	what := "Pods " + cfg.WebhookSelector.String() + " in " + cfg.Namespace
	if f, failed := unreadable("list Pods in "+cfg.Namespace, what, err); failed {
		return f
	}
	facts := podsFacts{Config: cfg, Total: len(list.Items)}
	if facts.Total == 0 {
		return judged(StatusFail, keyPodsNone, facts)
	}
	for i := range list.Items {
		if why := notReadyReason(&list.Items[i]); why != "" {
			facts.NotReady = append(facts.NotReady, podState{list.Items[i].Name, why})
		} else {
			facts.Ready = append(facts.Ready, list.Items[i].Name)
		}
	}
	slices.Sort(facts.Ready)
	slices.SortFunc(facts.NotReady, func(a, b podState) int {
		return cmp.Or(cmp.Compare(a.Name, b.Name), cmp.Compare(a.Why, b.Why))
	})
	switch {
	case len(facts.Ready) >= cfg.MinReadyWebhooks:
		return judged(StatusPass, keyPodsEnough, facts)
	case len(facts.Ready) > 0:
		return judged(StatusWarn, keyPodsFew, facts)
	}
	return judged(StatusFail, keyPodsNoneReady, facts)
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

// webhookPods selects the webhook Pods in cfg.Namespace.
func webhookPods(cfg Config) metav1.ListOptions {
	return metav1.ListOptions{LabelSelector: cfg.WebhookSelector.String()}
}

func podPhase(p *corev1.Pod) corev1.PodPhase { return cmp.Or(p.Status.Phase, corev1.PodUnknown) }

// leaseFacts are what syncer-lease found: the Lease's holder and term,
// the holder's Pod and whether its ServiceAccount may patch the MWC.
type leaseFacts struct {
	Config
	Holder           string
	Renewed, Expires time.Time
	Duration         int32 // seconds
	Pod, User        string
	Phase            corev1.PodPhase
	Terminating      bool
	Reason           string // why the patch is not allowed
	Err              error
}

// checkSyncerLease fails on an empty or expired Lease: a replica that shuts
// down releases it and a standby takes it within a retry period, so then no
// replica is there to take it.
func checkSyncerLease(ctx context.Context, client kubernetes.Interface, cfg Config, now time.Time) Result {
	return decideSyncerLease(ctx, client, cfg, now).result(IDSyncerLease)
}

func decideSyncerLease(ctx context.Context, client kubernetes.Interface, cfg Config, now time.Time) found {
	f := leaseFacts{Config: cfg}
	leases := client.CoordinationV1().Leases(cfg.LeaderElectionNamespace)
	lease, err := leases.Get(ctx, cfg.LeaderElectionID, metav1.GetOptions{})
	name := cfg.LeaderElectionNamespace + "/" + cfg.LeaderElectionID
	switch {
	case apierrors.IsNotFound(err):
		return judged(StatusFail, keyLeaseMissing, f)
	case err != nil:
		res, _ := unreadable("get Lease "+name, "Lease "+name, err)
		return res
	case lease.Spec.HolderIdentity == nil || *lease.Spec.HolderIdentity == "":
		return judged(StatusFail, keyLeaseNoHolder, f)
	}
	f.Holder = *lease.Spec.HolderIdentity
	if lease.Spec.RenewTime == nil || lease.Spec.LeaseDurationSeconds == nil {
		return judged(StatusFail, keyLeaseNoTerm, f)
	}
	f.Renewed, f.Duration = lease.Spec.RenewTime.Time, *lease.Spec.LeaseDurationSeconds
	f.Expires = f.Renewed.Add(time.Duration(f.Duration) * time.Second)
	if f.Expires.Before(now) {
		return judged(StatusFail, keyLeaseExpired, f)
	}
	return decideHolderPod(ctx, client, f)
}

// decideHolderPod judges a live Lease by its holder's Pod. A holder without
// a running Pod renews the Lease from somewhere, such as an old replica
// with a hostname identity or a process outside the cluster: the caBundle
// may well be kept, so that only warns.
func decideHolderPod(ctx context.Context, client kubernetes.Interface, f leaseFacts) found {
	f.Pod = syncer.HolderPodName(f.Holder)
	pod, err := client.CoreV1().Pods(f.Namespace).Get(ctx, f.Pod, metav1.GetOptions{})
	f.Err = err
	switch {
	case apierrors.IsNotFound(err):
		return judged(StatusWarn, keyLeaseElsewhere, f)
	case denied(err):
		// The Lease shows a leader renewing its term, but whether its Pod
		// runs was not seen; see unreadable.
		return judged(StatusSkip, keyLeasePodDenied, f)
	case err != nil:
		return judged(StatusFail, keyLeasePodFailed, f)
	}
	f.User = syncerUser(pod)
	if res, ok := decideSyncerMayPatch(ctx, client, f, pod); !ok {
		return res
	}
	f.Phase, f.Terminating = podPhase(pod), pod.DeletionTimestamp != nil
	if f.Phase != corev1.PodRunning || f.Terminating {
		return judged(StatusWarn, keyLeaseNotRunning, f)
	}
	return judged(StatusPass, keyLeaseHealthy, f)
}

// decideSyncerMayPatch asks the API server's authorizer whether the leader's
// ServiceAccount may patch the MWC, the one write of the syncer. It writes
// only when the CA changes, so a lost binding or a narrowed role shows
// nowhere else until the next rotation, whose caBundle then never arrives
// and the API server stops trusting the webhook. It returns false with the
// item's finding when the answer is not yes.
func decideSyncerMayPatch(ctx context.Context, client kubernetes.Interface, f leaseFacts,
	pod *corev1.Pod) (found, bool) {
	sar := &authorizationv1.SubjectAccessReview{Spec: authorizationv1.SubjectAccessReviewSpec{
		User:   f.User,
		Groups: serviceaccount.MakeGroupNames(pod.Namespace),
		ResourceAttributes: &authorizationv1.ResourceAttributes{
			Verb: "patch", Group: admissionregistrationv1.GroupName, Version: "v1",
			Resource: "mutatingwebhookconfigurations", Name: f.WebhookConfiguration,
		},
	}}
	got, err := client.AuthorizationV1().SubjectAccessReviews().Create(ctx, sar, metav1.CreateOptions{})
	f.Err = err
	switch {
	case denied(err):
		return judged(StatusSkip, keyLeaseSARDenied, f), false
	case err != nil:
		return judged(StatusFail, keyLeaseSARFailed, f), false
	case !got.Status.Allowed:
		f.Reason = cmp.Or(got.Status.Reason, got.Status.EvaluationError)
		return judged(StatusFail, keyLeaseMayNotPatch, f), false
	}
	return found{}, true
}

// syncerUser is the user name of the Pod's ServiceAccount; a Pod that names
// none runs as default, which the API server fills in on create.
func syncerUser(p *corev1.Pod) string {
	return serviceaccount.MakeUsername(p.Namespace, cmp.Or(p.Spec.ServiceAccountName, "default"))
}

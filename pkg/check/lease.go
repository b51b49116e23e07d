package check

import (
	"context"
	"fmt"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/kyma-project/kim-snatch/pkg/syncer"
)

// checkSyncerLease checks that a syncer leads: the Lease has a holder whose
// term has not run out, and the holder's Pod runs. A replica that shuts
// down releases the Lease (empty holder) and a standby takes it within a
// retry period, so an empty or expired Lease means no replica is there to
// take it.
func checkSyncerLease(ctx context.Context, client kubernetes.Interface, cfg Config, now time.Time) Result {
	what := fmt.Sprintf("Lease %s/%s", cfg.LeaderElectionNamespace, cfg.LeaderElectionID)
	lease, err := client.CoordinationV1().Leases(cfg.LeaderElectionNamespace).Get(ctx, cfg.LeaderElectionID, metav1.GetOptions{})
	switch {
	case isNotFound(err):
		lease = nil
	case err != nil:
		return readFailure(IDSyncerLease, what, err)
	}
	verdict := leaseVerdict(cfg, lease, now)
	if verdict.Status != StatusPass {
		return verdict
	}
	holder := *lease.Spec.HolderIdentity
	podName := syncer.HolderPodName(holder)
	pod, err := client.CoreV1().Pods(cfg.Namespace).Get(ctx, podName, metav1.GetOptions{})
	switch {
	case isNotFound(err):
		pod = nil
	case apierrors.IsForbidden(err):
		// The Lease alone shows a leader renewing its term. The syncer's
		// own ServiceAccount may not read Pods, and check runs in its Pod.
		verdict.Message += fmt.Sprintf("; its Pod %s/%s was not looked at: these credentials may not get Pods", cfg.Namespace, podName)
		return verdict
	case err != nil:
		return readFailure(IDSyncerLease, fmt.Sprintf("Pod %s/%s, the holder of %s", cfg.Namespace, podName, what), err)
	}
	return holderPodResult(cfg, verdict, holder, podName, pod)
}

// leaseVerdict judges the Lease alone: FAIL when nobody holds it, PASS with
// a message about the term otherwise.
func leaseVerdict(cfg Config, lease *coordinationv1.Lease, now time.Time) Result {
	what := fmt.Sprintf("Lease %s/%s", cfg.LeaderElectionNamespace, cfg.LeaderElectionID)
	syncerPods := fmt.Sprintf("kubectl -n %s get pods -l app.kubernetes.io/name=cabundle-syncer", cfg.Namespace)
	fail := func(msg, remediation string) Result {
		return Result{ID: IDSyncerLease, Status: StatusFail, Message: msg, Remediation: remediation}
	}
	if lease == nil {
		return fail(what+" not found: no cabundle-syncer has ever led, so nothing keeps the caBundle in step with the CA",
			fmt.Sprintf("Deploy the syncer (kubectl apply -k deploy/syncer), check --leader-election-namespace/--leader-election-id, and look at its Pods: %s.", syncerPods))
	}
	if lease.Spec.HolderIdentity == nil || *lease.Spec.HolderIdentity == "" {
		return fail(what+" has no holder: the last leader released it and no replica took it; nothing keeps the caBundle in step with the CA",
			fmt.Sprintf("Check that the syncer Deployment has running replicas and read their logs: %s.", syncerPods))
	}
	holder := *lease.Spec.HolderIdentity
	if lease.Spec.RenewTime == nil || lease.Spec.LeaseDurationSeconds == nil {
		return fail(fmt.Sprintf("%s held by %s has no renewTime or leaseDurationSeconds, so its term cannot be told", what, holder),
			fmt.Sprintf("Delete the Lease so that a syncer replica recreates it (kubectl -n %s delete lease %s) and check %s.", cfg.LeaderElectionNamespace, cfg.LeaderElectionID, syncerPods))
	}
	renewed := lease.Spec.RenewTime.Time
	expires := renewed.Add(time.Duration(*lease.Spec.LeaseDurationSeconds) * time.Second)
	if expires.Before(now) {
		return fail(fmt.Sprintf("%s held by %s expired at %s (renewed %s, duration %ds): the leader stopped renewing and no replica took over",
			what, holder, formatTime(expires), formatTime(renewed), *lease.Spec.LeaseDurationSeconds),
			fmt.Sprintf("Check that the syncer replicas run and can reach the API server, and read their logs: %s.", syncerPods))
	}
	return Result{
		ID:     IDSyncerLease,
		Status: StatusPass,
		Message: fmt.Sprintf("%s held by %s, renewed %s, valid until %s",
			what, holder, formatTime(renewed), formatTime(expires)),
	}
}

// holderPodResult adds what is known about the holder's Pod to a live
// Lease. A holder without a running Pod still renews the Lease from
// somewhere: an old replica with a hostname identity, a process outside the
// cluster, or a Pod in another namespace. The caBundle may well be kept, so
// this is a warning, not a failure.
func holderPodResult(cfg Config, live Result, holder, podName string, pod *corev1.Pod) Result {
	switch {
	case pod == nil:
		return Result{
			ID:     IDSyncerLease,
			Status: StatusWarn,
			Message: fmt.Sprintf("%s, but Pod %s/%s does not exist; the leader runs elsewhere",
				live.Message, cfg.Namespace, podName),
			Remediation: fmt.Sprintf("Find the process that holds the Lease as %s; a syncer in this cluster sets POD_NAME (deploy/syncer) and runs in --namespace %s.", holder, cfg.Namespace),
		}
	case podPhase(pod) != corev1.PodRunning || pod.DeletionTimestamp != nil:
		state := string(podPhase(pod))
		if pod.DeletionTimestamp != nil {
			state += ", terminating"
		}
		return Result{
			ID:          IDSyncerLease,
			Status:      StatusWarn,
			Message:     fmt.Sprintf("%s, but its Pod %s/%s is %s", live.Message, cfg.Namespace, podName, state),
			Remediation: fmt.Sprintf("A standby takes over once the Lease expires; if none does, check the syncer replicas: kubectl -n %s describe pod %s.", cfg.Namespace, podName),
		}
	default:
		live.Message = fmt.Sprintf("%s; Pod %s/%s is Running", live.Message, cfg.Namespace, podName)
		return live
	}
}

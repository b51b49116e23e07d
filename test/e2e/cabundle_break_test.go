package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	authorizationv1 "k8s.io/api/authorization/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/util/retry"

	"github.com/kyma-project/kim-snatch/pkg/syncer"
	"github.com/kyma-project/kim-snatch/test/e2e/stack"
	"github.com/kyma-project/kim-snatch/test/framework/poll"
)

// wipeCABundleWithoutPatch leaves the caBundle empty the one way it stays
// empty while a syncer leads: the leader keeps its Lease but may no longer
// write the MutatingWebhookConfiguration, as after RBAC drift. First it
// shows why nothing simpler works: with the shipped RBAC the leader puts a
// wiped caBundle back before any check could see it. Restoring gives the
// ClusterRole its rules back; the leader then repairs the caBundle itself.
func wipeCABundleWithoutPatch(t *testing.T) func(context.Context) error {
	ctx := context.Background()
	cs := sys.Clientset()
	assertLeaderRepairsWipe(ctx, t, cs)
	restore := revokeSyncerPatch(ctx, t, cs)
	// The authorizer learns of the change through a watch; wipe only once
	// it refuses, or the leader may still repair the wipe.
	if err := waitSyncerMayPatch(ctx, cs, false); err != nil {
		_ = restore(ctx)
		t.Fatal(err)
	}
	wipeWhileRefused(ctx, t, cs, restore)
	return func(ctx context.Context) error {
		if err := restore(ctx); err != nil {
			return err
		}
		return waitSyncerMayPatch(ctx, cs, true)
	}
}

// assertLeaderRepairsWipe wipes the caBundle with the shipped RBAC and
// waits until the leader has put it back.
func assertLeaderRepairsWipe(ctx context.Context, t *testing.T, cs kubernetes.Interface) {
	fp := secretCAFingerprint(t)

	wiped := time.Now()
	if err := wipeCABundle(ctx, cs); err != nil {
		t.Fatal(err)
	}
	if err := sys.WaitBundleHas(ctx, 30*time.Second, fp); err != nil {
		t.Fatalf("with the shipped RBAC the leader does not repair a wiped caBundle: %v", err)
	}
	logf("caBundle wiped with the shipped RBAC: the leader repaired it %s later", time.Since(wiped).Round(time.Millisecond))
}

// revokeSyncerPatch takes the verb patch on mutatingwebhookconfigurations
// from the syncer's ClusterRole, and returns what gives the shipped rules
// back.
func revokeSyncerPatch(ctx context.Context, t *testing.T, cs kubernetes.Interface) (restore func(context.Context) error) {
	roles := cs.RbacV1().ClusterRoles()
	role, err := roles.Get(ctx, stack.SyncerServiceAccount, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	shipped := role.DeepCopy().Rules
	removed := 0
	for i, rule := range role.Rules {
		if slices.Contains(rule.Resources, "mutatingwebhookconfigurations") {
			n := len(rule.Verbs)
			role.Rules[i].Verbs = slices.DeleteFunc(slices.Clone(rule.Verbs), func(v string) bool { return v == "patch" })
			removed += n - len(role.Rules[i].Verbs)
		}
	}
	if removed != 1 {
		t.Fatalf("ClusterRole %s grants patch on mutatingwebhookconfigurations %d times, want once: %v", role.Name, removed, shipped)
	}
	if _, err := roles.Update(ctx, role, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	return func(ctx context.Context) error {
		return retry.RetryOnConflict(retry.DefaultRetry, func() error {
			role, err := roles.Get(ctx, stack.SyncerServiceAccount, metav1.GetOptions{})
			if err != nil {
				return err
			}
			role.Rules = shipped
			_, err = roles.Update(ctx, role, metav1.UpdateOptions{})
			return err
		})
	}
}

// wipeWhileRefused wipes the caBundle while the leader may not patch it
// and, where the system finds the leader, waits until the leader counts
// and logs the refused write. It restores before it fails t.
func wipeWhileRefused(ctx context.Context, t *testing.T, cs kubernetes.Interface, restore func(context.Context) error) {
	var leader *replica
	refusedBefore := 0.0
	if lf, ok := sys.(leaderFinder); ok {
		l, err := lf.Leader(ctx)
		leader = &l
		if err != nil {
			_ = restore(ctx)
			t.Fatal(err)
		}
		refusedBefore = applyFailures(*leader)
	}
	if err := wipeCABundle(ctx, cs); err != nil {
		_ = restore(ctx)
		t.Fatal(err)
	}
	if leader != nil {
		// The leader saw the wipe and was refused the write: the caBundle
		// stays empty because of the RBAC, not because nobody looked.
		err := poll.Until(ctx, "leader "+leader.Name+" to count a refused write",
			refusedAgain(*leader, refusedBefore), poll.Timeout(30*time.Second))
		if err != nil {
			_ = restore(ctx)
			t.Fatal(err)
		}
		refusal := refusalInLog(leader.logTail(50))
		if !strings.Contains(refusal, "system:serviceaccount:"+stack.Namespace+":"+stack.SyncerServiceAccount) {
			_ = restore(ctx)
			t.Fatalf("leader %s did not log the ServiceAccount's refused patch; last lines:\n%s", leader.Name, leader.logTail(10))
		}
		logf("caBundle wiped without patch: leader %s refused %v write(s) so far: %s",
			leader.Name, applyFailures(*leader)-refusedBefore, refusal)
	}
}

// wipeCABundle empties the caBundle of every webhook entry.
func wipeCABundle(ctx context.Context, cs kubernetes.Interface) error {
	mwcs := cs.AdmissionregistrationV1().MutatingWebhookConfigurations()
	return retry.RetryOnConflict(retry.DefaultRetry, func() error {
		mwc, err := mwcs.Get(ctx, stack.WebhookConfigName, metav1.GetOptions{})
		if err != nil {
			return err
		}
		for i := range mwc.Webhooks {
			mwc.Webhooks[i].ClientConfig.CABundle = nil
		}
		_, err = mwcs.Update(ctx, mwc, metav1.UpdateOptions{FieldManager: "e2e-check"})
		return err
	})
}

// waitSyncerMayPatch waits until the API server's authorizer answers want
// to "may ServiceAccount cabundle-syncer patch the
// MutatingWebhookConfiguration".
func waitSyncerMayPatch(ctx context.Context, cs kubernetes.Interface, want bool) error {
	sar := &authorizationv1.SubjectAccessReview{Spec: authorizationv1.SubjectAccessReviewSpec{
		User:   "system:serviceaccount:" + stack.Namespace + ":" + stack.SyncerServiceAccount,
		Groups: []string{"system:serviceaccounts", "system:serviceaccounts:" + stack.Namespace, "system:authenticated"},
		ResourceAttributes: &authorizationv1.ResourceAttributes{
			Group: "admissionregistration.k8s.io", Resource: "mutatingwebhookconfigurations",
			Name: stack.WebhookConfigName, Verb: "patch",
		},
	}}
	what := fmt.Sprintf("the authorizer to answer %v to: may ServiceAccount %s patch %s",
		want, stack.SyncerServiceAccount, stack.WebhookConfigName)
	return poll.Until(ctx, what, func(ctx context.Context) error {
		res, err := cs.AuthorizationV1().SubjectAccessReviews().Create(ctx, sar, metav1.CreateOptions{})
		if err != nil {
			return err
		}
		if res.Status.Allowed != want {
			return fmt.Errorf("allowed %v, reason %q", res.Status.Allowed, res.Status.Reason)
		}
		return nil
	}, poll.Timeout(30*time.Second))
}

// applyFailures is the leader's count of refused caBundle writes; a series
// not yet created counts 0.
func applyFailures(r replica) float64 {
	v, err := r.Metric("cabundle_syncer_errors_total", `{reason="`+syncer.ReasonApplyFailed+`"}`)
	if err != nil {
		return 0
	}
	return v
}

// refusedAgain holds once leader counts more refused caBundle writes than
// before, and otherwise reports its count.
func refusedAgain(leader replica, before float64) poll.Condition {
	return func(context.Context) error {
		series := `{reason="` + syncer.ReasonApplyFailed + `"}`
		v, err := leader.Metric("cabundle_syncer_errors_total", series)
		if err != nil {
			return fmt.Errorf("%v before; now: %w", before, err)
		}
		if v <= before {
			return fmt.Errorf("cabundle_syncer_errors_total%s is %v, %v before", series, v, before)
		}
		return nil
	}
}

// refusalInLog returns the error of the last line of a syncer's JSON log
// that says a patch was forbidden, or "".
func refusalInLog(log string) string {
	lines := strings.Split(log, "\n")
	for i := len(lines) - 1; i >= 0; i-- {
		var line struct {
			Error string `json:"error"`
		}
		if json.Unmarshal([]byte(lines[i]), &line) == nil && strings.Contains(line.Error, "cannot patch resource") {
			return line.Error
		}
	}
	return ""
}

package e2e

import (
	"context"
	"fmt"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"
	"k8s.io/utils/ptr"

	"github.com/kyma-project/kim-snatch/pkg/check"
	"github.com/kyma-project/kim-snatch/test/e2e/stack"
	"github.com/kyma-project/kim-snatch/test/framework"
	"github.com/kyma-project/kim-snatch/test/framework/poll"
)

// The unresponsive webhook: every replica reachable, none answering, as
// behind a network blackhole or a stalled VPN between the API server and
// the cluster. Each replica's Pod is frozen (freezeWebhooks); the kernel
// still accepts its connections. Kyma Pods created meanwhile wait out
// timeoutSeconds and are admitted without the term; none fails. The
// kubelet's readiness probe takes the replicas out of the endpoints after
// two failed probes (period 5 s, threshold 2), after which calls fail at
// once, so the freeze lasts freezeWindow, well within it.
//
// Run once at the shipped timeout and once at 1 s, and once healthy, this
// is the measurement behind timeoutSeconds (docs/architecture.md).
func TestFrozenWebhookFailsNoCreate(t *testing.T) {
	framework.InTier(t, framework.Full, "the measurement behind timeoutSeconds; the smoke's break proves fail-open")
	framework.Alone(t, "it freezes a webhook replica")
	requireNode(t, "the webhook's processes are not on this host")
	c := newChecker(t)
	watch := newAlertWatch(t)
	ns := namespace(t, "e2e-frozen", true)

	healthy := createFor(t, ns, 3*time.Second)
	logf("healthy webhook: %s", healthy)
	if healthy.missing != 0 {
		t.Errorf("healthy webhook: %d Pods without the term", healthy.missing)
	}

	// The API server's counters of failed calls appear with the first
	// failure, and a rate needs two samples of them: one short freeze
	// first, so that the measured ones count from a sample that has them.
	thaw := freezeWebhooks(t)
	createFor(t, ns, time.Second)
	thaw()

	for _, timeout := range []int32{2, 1} {
		t.Run(fmt.Sprintf("timeout_%ds_fails_open", timeout), func(t *testing.T) { freezeAtTimeout(t, c, watch, ns, timeout) })
	}
	watch.table()
}

// freezeAtTimeout freezes the webhooks for freezeWindow with timeoutSeconds
// set to timeout, while Kyma Pods are created and the check runs, and
// holds the creates, the check and the alerts to the freeze.
func freezeAtTimeout(t *testing.T, c checker, watch *alertWatch, ns string, timeout int32) {
	restore := setTimeout(t, timeout)
	defer restore()
	// Only the kube-apiserver sees the calls that get no answer.
	// In the Shoot profile KimSnatchKymaPodsAdmittedWithoutWebhook
	// stands in when the freeze goes on for minutes, far longer
	// than this one.
	alerts := map[string][]string{stack.ProfileAPIServer: {alertFailingOpen, alertCallsSlow}}
	watch.quiet(t, alerts)
	broken := time.Now()
	rise := failOpen(t)
	reportDone := make(chan checkRun, 1)
	frozen := freezeWebhooks(t)
	go func() {
		reportDone <- c.run(t, nil, "--kubeconfig", sys.KubeconfigPath(), "-o", "json")
	}()
	res := createFor(t, ns, freezeWindow)
	frozen()
	run := <-reportDone
	rise = failOpen(t) - rise
	logf("frozen webhook, timeoutSeconds %d: %s; fail-open count +%v", timeout, res, rise)
	assertFrozenCreates(t, res, rise)
	assertCheckDuringFreeze(t, run)
	// The replicas answer again and are scraped as before; the API
	// server's counters kept the freeze. A readiness probe that
	// failed during the freeze is a trait of the freeze, not of a
	// blackhole (the kubelet probes from the node): wait until
	// every replica is available again.
	waitWebhooksAvailable(t, time.Minute)
	// The Pods created during the freeze reach no replica until it
	// thaws and reads the calls it queued: the witness of both profiles
	// may fire meanwhile.
	watch.await(t, fmt.Sprintf("frozen webhook, timeoutSeconds %d", timeout), broken, alerts, []string{alertMissedByWebhook}, panelChange{})
}

// assertFrozenCreates holds the creates during a freeze to failurePolicy
// Ignore: none failed, some lack the term, and each that lacks it, and the
// check's dry run, counted as failed open (rise).
func assertFrozenCreates(t *testing.T, res createStats, rise float64) {
	t.Helper()
	if res.errors != 0 {
		t.Errorf("%d creates failed with the webhook frozen, want none: failurePolicy Ignore", res.errors)
	}
	// The check's dry run fails open too.
	if float64(res.missing+1) != rise {
		t.Errorf("%d Pods lack the term and the check dry-ran one, but the fail-open count rose by %v: want %d", res.missing, rise, res.missing+1)
	}
	if res.missing == 0 {
		t.Errorf("no Pod lacks the term: the freeze did not hold")
	}
}

// assertCheckDuringFreeze holds the check run during a freeze: its
// admission item fails.
func assertCheckDuringFreeze(t *testing.T, run checkRun) {
	t.Helper()
	r, err := decodeReport(run.stdout, false)
	if err != nil {
		t.Fatalf("%v\n%s", err, run)
	}
	adm := result(r, check.IDAdmission)
	logf("check during the freeze: exit %d, admission %s: %s", run.code, adm.Status, adm.Message)
	if adm.Status != check.StatusFail {
		t.Errorf("admission = %s %q with every replica frozen, want FAIL", adm.Status, adm.Message)
	}
	for _, id := range []string{check.IDWebhookPods, check.IDWebhookEndpoints} {
		if st := result(r, id).Status; st != check.StatusPass {
			t.Logf("%s = %s during the freeze (the reads see %s)", id, st, result(r, id).Message)
		}
	}
}

const (
	// freezeWindow is how long the replicas stay frozen: less than the
	// readiness probe needs to take them out of the endpoints.
	freezeWindow = 5 * time.Second
)

// createStats are the figures of a burst of Kyma Pod creations.
type createStats struct {
	created, errors, missing int
	p50, p99, max            time.Duration
}

func (s createStats) String() string {
	return fmt.Sprintf("%d Pods created (%d errors), %d without the term, create latency p50 %s p99 %s max %s",
		s.created, s.errors, s.missing, s.p50.Round(time.Millisecond), s.p99.Round(time.Millisecond), s.max.Round(time.Millisecond))
}

// createFor creates 5 Pods a second in ns for d, waits for every create
// to return, counts the Pods that lack the term and deletes them.
func createFor(t *testing.T, ns string, d time.Duration) createStats {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), d)
	res := createLoad(ctx, ns, 5)
	cancel()
	s := createStats{created: len(res.created), errors: len(res.errors), p50: res.percentile(0.5), p99: res.percentile(0.99)}
	for _, l := range res.latency {
		s.max = max(s.max, l)
	}
	pods := sys.Clientset().CoreV1().Pods(ns)
	for _, name := range res.created {
		p, err := pods.Get(context.Background(), name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if poolTerms(p) != 1 {
			s.missing++
		}
		if err := pods.Delete(context.Background(), name, metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	return s
}

// setTimeout sets the webhook entry's timeoutSeconds and returns what
// puts the shipped value back.
func setTimeout(t *testing.T, seconds int32) (restore func()) {
	t.Helper()
	ctx := context.Background()
	mwcs := sys.Clientset().AdmissionregistrationV1().MutatingWebhookConfigurations()
	var shipped int32
	set := func(v *int32) error {
		return retry.RetryOnConflict(retry.DefaultRetry, func() error {
			m, err := mwcs.Get(ctx, stack.WebhookConfigName, metav1.GetOptions{})
			if err != nil {
				return err
			}
			if shipped == 0 {
				shipped = *m.Webhooks[0].TimeoutSeconds
			}
			m.Webhooks[0].TimeoutSeconds = v
			_, err = mwcs.Update(ctx, m, metav1.UpdateOptions{FieldManager: "e2e-frozen"})
			return err
		})
	}
	if err := set(&seconds); err != nil {
		t.Fatal(err)
	}
	// The API server's webhook source picks the change up through a watch.
	time.Sleep(2 * time.Second)
	restore = func() {
		if err := set(&shipped); err != nil {
			t.Errorf("restore timeoutSeconds %d: %v", shipped, err)
		}
	}
	return restore
}

// breakNamespaceSelector makes the webhook entry's namespaceSelector
// select no Kyma namespace, as a hand edit or a bad overlay would; the
// syncer owns only the caBundle, so nothing repairs it. Restoring puts the
// shipped selector back.
func breakNamespaceSelector(t *testing.T) func(context.Context) error {
	mwcs := sys.Clientset().AdmissionregistrationV1().MutatingWebhookConfigurations()
	var shipped *metav1.LabelSelector
	update := func(ctx context.Context, change func(*metav1.LabelSelector) *metav1.LabelSelector) error {
		return retry.RetryOnConflict(retry.DefaultRetry, func() error {
			m, err := mwcs.Get(ctx, stack.WebhookConfigName, metav1.GetOptions{})
			if err != nil {
				return err
			}
			m.Webhooks[0].NamespaceSelector = change(m.Webhooks[0].NamespaceSelector)
			_, err = mwcs.Update(ctx, m, metav1.UpdateOptions{FieldManager: "e2e-check"})
			return err
		})
	}
	err := update(context.Background(), func(s *metav1.LabelSelector) *metav1.LabelSelector {
		shipped = s.DeepCopy()
		return &metav1.LabelSelector{MatchLabels: map[string]string{check.ManagedByLabel: "kyma-broken"}}
	})
	if err != nil {
		t.Fatal(err)
	}
	return func(ctx context.Context) error {
		return update(ctx, func(*metav1.LabelSelector) *metav1.LabelSelector { return shipped })
	}
}

// A webhook frozen for good, as a deadlock on every start would leave it:
// each replica's Pod is frozen (freezeWebhooks) until the alerts and the
// check have shown it, so no container the kubelet restarts answers
// either. The readiness probe takes the replicas out of the endpoints, so
// calls fail at once, and open.
//
// The short freeze of TestFrozenWebhookFailsNoCreate shows only to the kube-apiserver.
// This one shows inside a shoot too: no replica is available, which
// kube-state-metrics reports, and KimSnatchWebhookUnavailable fires in both
// monitoring profiles, and the check fails webhook-pods and admission.
// The table gives the time each alert takes.
func TestWebhookFrozenForGoodIsUnavailableInBothProfiles(t *testing.T) {
	framework.InTier(t, framework.Full, "a second unavailability break; the smoke's break stops every replica")
	framework.Alone(t, "it freezes every webhook replica")
	requireNode(t, "the webhook's processes are not on this host")
	watch := newAlertWatch(t)
	alerts := map[string][]string{
		stack.ProfileAPIServer: {alertWebhookUnavailable, alertFailingOpen},
		stack.ProfileShoot:     {alertWebhookUnavailable},
	}
	watch.quiet(t, alerts)
	broken := time.Now()
	thaw := freezeWebhooks(t)
	// Calls wait out timeoutSeconds until the readiness probe has taken
	// the replicas out, which may be slow enough for the p99 of
	// KimSnatchWebhookCallsSlow.
	watch.await(t, "webhook frozen for good", broken, alerts, []string{alertCallsSlow, alertMissedByWebhook}, panelChange{})
	// The check says so too: no replica is ready, and a Kyma Pod comes
	// back without the term.
	run := newChecker(t).run(t, nil, "--kubeconfig", sys.KubeconfigPath(), "-o", "json")
	r, err := decodeReport(run.stdout, false)
	if err != nil {
		t.Fatalf("%v\n%s", err, run)
	}
	for _, id := range []string{check.IDWebhookPods, check.IDAdmission} {
		if res := result(r, id); res.Status != check.StatusFail {
			t.Errorf("%s = %s %q with every replica frozen for good, want FAIL", id, res.Status, res.Message)
		}
	}
	thaw()
	logf("webhook frozen for good: %d Pods frozen, then thawed", sys.WebhookReplicas())
	// The kill of the container whose liveness probe failed completes at
	// the thaw; the kubelet restarts it after its back-off.
	waitWebhooksAvailable(t, 3*time.Minute)
	watch.table()
}

// waitWebhooksAvailable waits until the webhook Deployment has every
// replica available, for at most d.
func waitWebhooksAvailable(t *testing.T, d time.Duration) {
	t.Helper()
	deploys := sys.Clientset().AppsV1().Deployments(stack.Namespace)
	what := "every replica of the webhook Deployment available after the thaw"
	err := poll.Until(context.Background(), what, func(ctx context.Context) error {
		dep, err := deploys.Get(ctx, stack.WebhookName, metav1.GetOptions{})
		if err != nil {
			return err
		}
		if dep.Spec.Replicas == nil || dep.Status.AvailableReplicas != *dep.Spec.Replicas {
			return fmt.Errorf("%d of %d replicas available", dep.Status.AvailableReplicas, ptr.Deref(dep.Spec.Replicas, 0))
		}
		return nil
	}, poll.Timeout(d))
	if err != nil {
		t.Fatal(err)
	}
}

package e2e

import (
	"context"
	"slices"
	"strconv"
	"syscall"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/kyma-project/kim-snatch/pkg/check"
	"github.com/kyma-project/kim-snatch/test/e2e/stack"
)

// A webhook frozen for good, as a deadlock on every start would leave it:
// each replica's process is stopped (SIGSTOP), and so is every process the
// kubelet starts after the liveness probe has failed. The readiness probe
// takes the replicas out of the endpoints, so calls fail at once, and open.
//
// The short freeze of TestFrozenWebhook shows only to the kube-apiserver.
// This one shows inside a shoot too: no replica is available, which
// kube-state-metrics reports, and KimSnatchWebhookUnavailable fires in both
// monitoring profiles, and the check fails webhook-pods and admission.
// The table gives the time each alert takes.
func TestWebhookFrozenForGoodIsUnavailableInBothProfiles(t *testing.T) {
	if _, ok := sys.(*nodeSystem); !ok {
		t.Skipf("%T: the webhook's processes are not on this host", sys)
	}
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
	watch.await(t, "webhook frozen for good", broken, alerts, []string{alertCallsSlow}, panelChange{})
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
	frozen := thaw()
	logf("webhook frozen for good: %d processes stopped, the first %d and every one the kubelet started after", frozen, sys.WebhookReplicas())
	if frozen < sys.WebhookReplicas() {
		t.Errorf("%d webhook processes stopped, want at least the %d replicas'", frozen, sys.WebhookReplicas())
	}
	// A container the liveness probe killed restarts after the kubelet's
	// back-off.
	waitWebhooksAvailable(t, 3*time.Minute)
	watch.table()
}

// freezeWebhooks stops every webhook process on this host, and every
// one that starts after, until thaw, which continues them and returns how
// many it stopped. t's cleanup thaws too. A freeze shorter than the
// liveness probe's patience stops the replicas' processes alone.
func freezeWebhooks(t *testing.T) (thaw func() int) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	var stopped []int
	freeze := func() {
		for _, p := range processesOf("/" + stack.WebhookName) {
			pid, err := strconv.Atoi(p)
			if err != nil || slices.Contains(stopped, pid) {
				continue
			}
			if err := syscall.Kill(pid, syscall.SIGSTOP); err == nil {
				stopped = append(stopped, pid)
			}
		}
	}
	freeze()
	if len(stopped) != sys.WebhookReplicas() {
		t.Fatalf("%d webhook processes stopped on this host, want %d", len(stopped), sys.WebhookReplicas())
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		// Every 50 ms: a process the kubelet starts is stopped about as
		// soon as it runs, before a readiness probe is likely to pass.
		_ = wait.PollUntilContextCancel(ctx, 50*time.Millisecond, false, func(context.Context) (bool, error) {
			freeze()
			return false, nil
		})
	}()
	thawed := false
	thaw = func() int {
		if thawed {
			return len(stopped)
		}
		thawed = true
		cancel()
		<-done
		for _, pid := range stopped {
			_ = syscall.Kill(pid, syscall.SIGCONT) // one the kubelet killed is gone
		}
		return len(stopped)
	}
	t.Cleanup(func() { thaw() })
	return thaw
}

// waitWebhooksAvailable waits until the webhook Deployment has every
// replica available, for at most d.
func waitWebhooksAvailable(t *testing.T, d time.Duration) {
	t.Helper()
	deploys := sys.Clientset().AppsV1().Deployments(stack.Namespace)
	err := wait.PollUntilContextTimeout(context.Background(), 200*time.Millisecond, d, true, func(ctx context.Context) (bool, error) {
		dep, err := deploys.Get(ctx, stack.WebhookName, metav1.GetOptions{})
		if err != nil {
			return false, nil
		}
		return dep.Spec.Replicas != nil && dep.Status.AvailableReplicas == *dep.Spec.Replicas, nil
	})
	if err != nil {
		t.Fatalf("the webhook Deployment does not have every replica available within %s of the thaw", d)
	}
}

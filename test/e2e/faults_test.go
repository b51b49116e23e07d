package e2e

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/kyma-project/kim-snatch/pkg/check"
	"github.com/kyma-project/kim-snatch/pkg/syncer/syncertest"
	"github.com/kyma-project/kim-snatch/test/e2e/stack"
	"github.com/kyma-project/kim-snatch/test/framework"
	"github.com/kyma-project/kim-snatch/test/framework/poll"
	"github.com/kyma-project/kim-snatch/test/process"
)

// Faults of the platform: kube-apiserver, etcd, containerd, the kubelet
// and the path from kube-apiserver to the webhook fail while Kyma Pods are
// created at 20 a second, once during a CA rotation and once under steady
// load. Whatever the platform does, no create fails or is denied because of
// the webhook, every Pod without the term is one the API server counted as
// failed open, the caBundle never loses the CA the replicas serve, the
// webhook's containers do not restart and its memory stays flat, and after
// the heal the syncer leads again, the caBundle converges and `check`
// passes. make test and make e2e run those of their tiers, make chaos all
// of them. The table at the end is that of docs/benchmarks.md, "Faults of
// the platform, on the real node"; docs/operations.md, "Known failure
// modes", says what each means for an installation.

// faultRate is the Pods created per second during a scenario.
const faultRate = 20

// observe is how long the watch goes on after the heal: a scrape interval
// of the suite's ServiceMonitors, an evaluation, and two more scrape
// intervals of margin.
func observe(t testing.TB) time.Duration {
	return 3*scrapeInterval(t) + evaluationInterval(t)
}

// faultRow is one scenario's line of the table.
type faultRow struct {
	scenario, load            string
	created, missing          int
	platformErrors            int
	failOpenRise              float64
	p99, max                  time.Duration
	bundle, leader, checkPass time.Duration // from the heal
	alerts, checks            []string
	quiet                     time.Duration // from the heal until no alert fires
	stillFiring               []string      // when not quiet: what was still active
	before                    []string      // active as the scenario began
	rssBefore, rssAfter       int64
	webhookRestarts           int32
	syncerRestarts            int32
}

// restarts adds up the container restarts of app's Pods.
func restarts(t *testing.T, app string) int32 {
	t.Helper()
	var n int32
	for _, p := range runningPods(t, app) {
		n += restartCount(p)
	}
	return n
}

func TestPlatformFaultsBreakNoInvariant(t *testing.T) {
	framework.InTier(t, framework.Smoke, "one platform fault; the others are in the full tier and make chaos")
	framework.Alone(t, "it kills, stops and cuts the platform's components")
	s, ok := sys.(*nodeSystem)
	if !ok {
		t.Skipf("%T's platform is not the suite's to break", sys)
	}
	c := newChecker(t)
	aw := newAlertWatch(t)
	all := os.Getenv(FaultsEnv) == "all"
	if !all {
		logf("platform faults: those of the tiers only; make chaos (%s=all) runs each under both loads", FaultsEnv)
	}
	var rows []faultRow
	for _, f := range platformFaults() {
		loads := f.loads
		if loads == nil {
			loads = []string{loadRotation, loadSteady}
		}
		for _, load := range loads {
			if !all && f.load != load {
				continue
			}
			t.Run(f.subtest()+"/"+load, func(t *testing.T) {
				if !all {
					framework.InTier(t, f.tier, "one fault in the smoke tier, two more in the full, all in make chaos")
				}
				rows = append(rows, runFault(t, s, c, aw, f, load))
			})
		}
	}
	logf("faults of the platform, %d Pods/s:\n%s", faultRate, faultTable(rows))
}

// runFault runs one scenario: load, then (under loadRotation) a renewal, the
// fault right after it, the heal, and the load on until the replicas
// serve the renewed certificate.
func runFault(t *testing.T, s *nodeSystem, c checker, aw *alertWatch, f platformFault, load string) faultRow {
	const lead = 5 * time.Second
	rotate := load == loadRotation
	row := faultRow{scenario: f.name, load: load}
	ns := namespace(t, "e2e-fault", true)
	inUse := secretCAFingerprint(t)
	row.rssBefore = webhookRSS(t)
	restartsBefore := restarts(t, stack.WebhookName)
	syncerRestartsBefore := restarts(t, stack.SyncerName)
	inject := f.prepare(t, s)

	row.before, _ = projectAlerts(t.Context(), s)
	watch := startFaultWatch(inUse, c.bin)
	defer watch.stop()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan loadResult)
	go func() { done <- createLoad(ctx, ns, faultRate) }()
	time.Sleep(lead)

	healed := inject(renewer(t, rotate))
	row.awaitConverged(t, healed, rotate)
	// The alerts' conditions show within a scrape and an evaluation of the
	// heal, pending or firing.
	time.Sleep(max(lead, time.Until(healed.Add(observe(t)))))
	cancel()
	res := <-done
	rise, samples, lostCA, alerts, checks := watch.stop()
	row.failOpenRise, row.alerts, row.checks = rise, alerts, checks
	checkSettled, alertsSettled := settledAfter(watch.checkRuns, healed), settledAfter(watch.alertRuns, healed)

	row.countLoad(t, ns, res)
	row.awaitSettled(t, s, c, healed, checkSettled, alertsSettled)
	if aw != nil {
		// The next scenario counts its own fail-opens and errors.
		aw.deleteHistory(t)
	}
	row.rssAfter = webhookRSS(t)
	row.webhookRestarts = restarts(t, stack.WebhookName) - restartsBefore
	row.syncerRestarts = restarts(t, stack.SyncerName) - syncerRestartsBefore
	row.countErrors(t, res.errors)
	row.assert(t, samples, lostCA)
	logf("%s under %s load: %s", f.name, row.load, row.String())
	return row
}

// renewer returns what renews the certificate under loadRotation, and a
// no-op under steady load.
func renewer(t *testing.T, rotate bool) func() {
	renew := func() {}
	if rotate {
		renew = func() {
			if _, err := sys.Renew(t.Context()); err != nil {
				t.Fatal(err)
			}
		}
	}
	return renew
}

// awaitConverged waits, from the heal, until the caBundle holds the
// Secret's CA and a syncer leads again, and under rotation until the
// replicas serve it.
func (r *faultRow) awaitConverged(t *testing.T, healed time.Time, rotate bool) {
	// The CA the Secret holds after the heal, which the replicas serve
	// once the kubelet has projected it.
	fp := secretCAFingerprint(t)
	r.bundle = sinceHeld(t, healed, poll.Until(context.Background(), "every caBundle to hold "+fp,
		bundleHolds(fp), poll.Timeout(3*time.Minute), faultPoll))
	r.leader = sinceHeld(t, healed, poll.Until(context.Background(), "a syncer to renew the Lease after the heal",
		leaseRenewedAfter(healed), poll.Timeout(3*time.Minute), faultPoll))
	if rotate {
		if err := sys.WaitServed(t.Context(), fp); err != nil {
			t.Error(err)
		}
	}
}

// bundleHolds holds once every caBundle holds the CA fp, and otherwise
// reports the fingerprints each holds.
func bundleHolds(fp string) poll.Condition {
	return func(ctx context.Context) error {
		mwcs := sys.Clientset().AdmissionregistrationV1().MutatingWebhookConfigurations()
		mwc, err := mwcs.Get(ctx, stack.WebhookConfigName, metav1.GetOptions{})
		if err != nil {
			return err
		}
		if !syncertest.EveryBundleHas(mwc, fp) {
			return fmt.Errorf("fingerprints per entry: %v", bundleFingerprints(mwc))
		}
		return nil
	}
}

// leaseRenewedAfter holds once a syncer has renewed the Lease after at,
// and otherwise reports its holder and last renewal.
func leaseRenewedAfter(at time.Time) poll.Condition {
	return func(ctx context.Context) error {
		l, err := sys.Clientset().CoordinationV1().Leases(stack.Namespace).Get(ctx, stack.LeaseName, metav1.GetOptions{})
		if err != nil {
			return err
		}
		if l.Spec.RenewTime == nil || !l.Spec.RenewTime.After(at) {
			return fmt.Errorf("the Lease is held by %q, renewed at %v", ptr.Deref(l.Spec.HolderIdentity, ""), l.Spec.RenewTime)
		}
		return nil
	}
}

// countLoad counts what the load created and the Pods of ns without the
// term, and deletes the load's Pods.
func (r *faultRow) countLoad(t *testing.T, ns string, res loadResult) {
	r.created = len(res.created)
	for _, l := range res.latency {
		r.max = max(r.max, l)
	}
	r.p99 = res.percentile(0.99)
	var missing []string
	missing, _ = withoutTerm(t, ns)
	r.missing = len(missing)
	// check's placement item rightly warns while Kyma Pods without the
	// term exist: the load's Pods go, as a workload's would be replaced.
	if err := sys.Clientset().CoreV1().Pods(ns).DeleteCollection(t.Context(), metav1.DeleteOptions{}, metav1.ListOptions{LabelSelector: "app=load"}); err != nil {
		t.Fatal(err)
	}
}

// awaitSettled takes from the heal the time until check passed and until
// no alert fired, during the scenario or else after it.
func (r *faultRow) awaitSettled(t *testing.T, s *nodeSystem, c checker, healed, checkSettled, alertsSettled time.Time) {
	// When check passed for good during the scenario, that is the time;
	// otherwise the first pass once the load has ended.
	r.checkPass = sinceOr(healed, checkSettled)
	if checkSettled.IsZero() {
		r.checkPass = sinceHeld(t, healed, poll.Until(context.Background(), "check to pass", func(context.Context) error {
			if run := c.run(t, nil, "--kubeconfig", sys.KubeconfigPath()); run.code != check.ExitPass {
				return errors.New(run.String())
			}
			return nil
		}, poll.Timeout(3*time.Minute), faultPoll))
	}
	// An alert that counts over a window, such as
	// KimSnatchWebhookFailingOpen over 10 minutes, fires on for the
	// window's length by design: what still fires a minute after check
	// passes is reported, not waited for.
	var firing []string
	r.quiet = sinceOr(healed, alertsSettled)
	if alertsSettled.IsZero() {
		r.quiet = sinceHeld(t, healed, poll.Until(context.Background(), "no KimSnatch alert active", func(ctx context.Context) error {
			var err error
			if firing, err = projectAlerts(ctx, s); err != nil {
				return err
			}
			if len(firing) > 0 {
				return fmt.Errorf("active: %v", firing)
			}
			return nil
		}, poll.Timeout(time.Minute), faultPoll))
		r.stillFiring = firing
	}
}

// countErrors fails t for each create the webhook failed, and counts
// those the platform failed.
func (r *faultRow) countErrors(t *testing.T, errs []error) {
	for _, err := range errs {
		if byWebhook(err) {
			t.Errorf("a create failed because of the webhook: %v", err)
		} else {
			r.platformErrors++
		}
	}
}

// assert holds the scenario to what no platform fault may change.
func (r *faultRow) assert(t *testing.T, samples int, lostCA string) {
	if r.created == 0 {
		t.Error("no Pod was created")
	}
	if float64(r.missing) > r.failOpenRise {
		t.Errorf("%d Pods lack the term, but the API server counted %v fail-opens: some were admitted without a call", r.missing, r.failOpenRise)
	}
	if samples == 0 {
		t.Error("the caBundle could not be read once during the scenario")
	}
	if lostCA != "" {
		t.Errorf("the caBundle lost the CA the replicas served: %s", lostCA)
	}
	for what, d := range map[string]time.Duration{"the caBundle did not converge": r.bundle, "no syncer led again": r.leader, "check did not pass": r.checkPass} {
		if d < 0 {
			t.Errorf("%s after the heal", what)
		}
	}
	if r.webhookRestarts != 0 {
		t.Errorf("the webhook's containers restarted %d times", r.webhookRestarts)
	}
	if r.rssAfter > 2*r.rssBefore {
		t.Errorf("the webhook replicas' memory grew from %d to %d bytes", r.rssBefore, r.rssAfter)
	}
}

// byWebhook tells a create the webhook failed from one the platform did:
// the API server names an admission webhook in the errors it causes.
func byWebhook(err error) bool {
	return strings.Contains(err.Error(), "admission webhook") || apierrors.IsForbidden(err) || apierrors.IsInvalid(err)
}

// faultPoll paces the waits after the heal, whose times from the heal the
// table reports.
var faultPoll = poll.Interval(250 * time.Millisecond)

// sinceHeld is the time from from until a wait that ended with err saw its
// condition hold, or -1 when it gave up, which it logs with the last state
// the wait saw.
func sinceHeld(t testing.TB, from time.Time, err error) time.Duration {
	if err != nil {
		t.Log(err)
		return -1
	}
	return max(time.Since(from), 0)
}

// sinceOr is at - from, or -1 when at is zero.
func sinceOr(from, at time.Time) time.Duration {
	if at.IsZero() {
		return -1
	}
	return max(at.Sub(from), 0)
}

// projectAlerts lists the project's alerts active in either profile, those
// only pending (their condition holds, their `for` has not passed) marked
// so.
func projectAlerts(ctx context.Context, s *nodeSystem) ([]string, error) {
	var names []string
	for profile := range stack.Profiles {
		prom, err := stack.Prometheus(ctx, sys.Clientset(), stack.Profiles[profile])
		if err != nil {
			return nil, err
		}
		v, err := queryVector(ctx, prom, `ALERTS{alertname=~"KimSnatch.*"}`)
		if err != nil {
			return nil, err
		}
		for _, smp := range v {
			name := profileTitles[profile] + ": " + string(smp.Metric["alertname"])
			if smp.Metric["alertstate"] == "pending" {
				name += " (pending)"
			}
			names = append(names, name)
		}
	}
	slices.Sort(names)
	return slices.Compact(names), nil
}

// faultWatch samples, every second, the API server's fail-open count, the
// caBundle and the alerts, whatever the platform answers.
type faultWatch struct {
	stopOnce func()
	wg       sync.WaitGroup
	mu       sync.Mutex
	// rise adds up the increases of the fail-open count; a count lower
	// than the last is a restarted API server's, counted from 0.
	rise, last float64
	seen       bool
	samples    int
	lostCA     string
	alerts     map[string]bool
	// checks are what `check` said during the scenario: the items that
	// did not pass, or its exit code where it wrote no report.
	checks   map[string]bool
	checkBin string
	// checkRuns and alertRuns tell, run by run, whether check passed and
	// whether no alert fired.
	checkRuns, alertRuns []outcome
}

// outcome is one run's result: good is a passing check, or no alert.
type outcome struct {
	at   time.Time
	good bool
}

// settledAfter is when runs turned good for good after from: the first good
// run after from and after the last bad one. It is zero when the last run
// was bad, or no run came after from.
func settledAfter(runs []outcome, from time.Time) time.Time {
	var at time.Time
	for _, r := range runs {
		switch {
		case !r.good:
			at = time.Time{}
		case at.IsZero() && r.at.After(from):
			at = r.at
		}
	}
	return at
}

func startFaultWatch(inUse, checkBin string) *faultWatch {
	w := &faultWatch{alerts: map[string]bool{}, checks: map[string]bool{}, checkBin: checkBin}
	ctx, cancel := context.WithCancel(context.Background())
	w.stopOnce = sync.OnceFunc(func() { cancel(); w.wg.Wait() })
	s := sys.(*nodeSystem)
	w.wg.Go(func() {
		tick := time.NewTicker(time.Second)
		defer tick.Stop()
		for {
			w.sample(ctx, s, inUse)
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
			}
		}
	})
	// check on its own, so that its runs do not space out the samples.
	w.wg.Go(func() {
		for {
			w.check(ctx)
			select {
			case <-ctx.Done():
				return
			case <-time.After(5 * time.Second):
			}
		}
	})
	return w
}

func (w *faultWatch) sample(ctx context.Context, s *nodeSystem, inUse string) {
	rctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	if v, err := stack.FailOpenCount(rctx, sys.Clientset(), stack.WebhookEntryName); err == nil {
		w.mu.Lock()
		switch {
		case !w.seen:
		case v >= w.last:
			w.rise += v - w.last
		default:
			w.rise += v
		}
		w.last, w.seen = v, true
		w.mu.Unlock()
	}
	if mwc, err := sys.Clientset().AdmissionregistrationV1().MutatingWebhookConfigurations().Get(rctx, stack.WebhookConfigName, metav1.GetOptions{}); err == nil {
		w.mu.Lock()
		w.samples++
		if !syncertest.EveryBundleHas(mwc, inUse) && w.lostCA == "" {
			w.lostCA = fmt.Sprintf("at %s no longer trusted %s", time.Now().Format(time.TimeOnly), inUse[:16])
		}
		w.mu.Unlock()
	}
	if firing, err := projectAlerts(rctx, s); err == nil {
		w.mu.Lock()
		for _, a := range firing {
			w.alerts[a] = true
		}
		w.alertRuns = append(w.alertRuns, outcome{time.Now(), len(firing) == 0})
		w.mu.Unlock()
	}
}

// check runs `check -o json` and notes the items that did not pass.
func (w *faultWatch) check(ctx context.Context) {
	rctx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	// A check that fails is what the watch samples, not an error.
	run, _ := process.Command{}.Run(rctx, w.checkBin, "check", "--kubeconfig", sys.KubeconfigPath(), "-o", "json")
	if rctx.Err() != nil {
		return
	}
	var said []string
	if r, err := decodeReport(run.Stdout, false); err == nil {
		for _, res := range r.Checks {
			if res.Status != check.StatusPass {
				said = append(said, res.ID+" "+string(res.Status))
			}
		}
	} else {
		said = append(said, "exit "+strconv.Itoa(run.Code))
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, s := range said {
		w.checks[s] = true
	}
	w.checkRuns = append(w.checkRuns, outcome{time.Now(), len(said) == 0})
}

// stop ends the sampling and returns what it saw.
func (w *faultWatch) stop() (rise float64, samples int, lostCA string, alerts, checks []string) {
	w.stopOnce()
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.rise, w.samples, w.lostCA, slices.Sorted(maps.Keys(w.alerts)), slices.Sorted(maps.Keys(w.checks))
}

// webhookRSS adds up the resident memory of the webhook's processes.
func webhookRSS(t *testing.T) int64 {
	t.Helper()
	var total int64
	for _, pid := range processesOf("/snatch-webhook") {
		b, err := os.ReadFile("/proc/" + pid + "/status")
		if err != nil {
			continue
		}
		kb, err := strconv.ParseInt(strings.TrimSuffix(procField(string(b), "VmRSS:"), " kB"), 10, 64)
		if err == nil {
			total += kb << 10
		}
	}
	if total == 0 {
		t.Error("no webhook process found")
	}
	return total
}

func (r faultRow) String() string {
	d := func(d time.Duration) string {
		if d < 0 {
			return "never"
		}
		return d.Round(100 * time.Millisecond).String()
	}
	quiet := d(r.quiet)
	if r.quiet < 0 {
		quiet = fmt.Sprintf("not within 1m of check passing (%v)", r.stillFiring)
	}
	return fmt.Sprintf("%d Pods, %d without the term, fail-open +%v, %d platform errors, create p99 %s max %s; after the heal: caBundle %s, leader %s, check passes %s, alerts quiet %s; check said %v; alerts %v (active at the start: %v); webhook RSS %d → %d KiB, restarts: webhook %d, syncer %d",
		r.created, r.missing, r.failOpenRise, r.platformErrors, r.p99.Round(time.Millisecond), r.max.Round(time.Millisecond),
		d(r.bundle), d(r.leader), d(r.checkPass), quiet, r.checks, r.alerts, r.before, r.rssBefore>>10, r.rssAfter>>10, r.webhookRestarts, r.syncerRestarts)
}

func faultTable(rows []faultRow) string {
	var b strings.Builder
	for _, r := range rows {
		fmt.Fprintf(&b, "| %s | %s | %s |\n", r.scenario, r.load, r.String())
	}
	return b.String()
}

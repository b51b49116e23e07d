package e2e

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	promv1 "github.com/prometheus/client_golang/api/prometheus/v1"
	"github.com/prometheus/common/model"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kyma-project/kim-snatch/test/e2e/stack"
	"github.com/kyma-project/kim-snatch/test/framework"
	"github.com/kyma-project/kim-snatch/test/framework/objects"
	"github.com/kyma-project/kim-snatch/test/framework/poll"
)

// An alert of a break, followed through the real Prometheus stack of
// test/e2e/neighbours/monitoring: one Prometheus per monitoring profile
// loads the shipped rules through prometheus-operator, scrapes what its
// profile reaches and sends to the Alertmanager main, whose receiver is
// the suite. Each alert the suite's breaks raise has its `for` shortened
// to 20s by the overlay's test-only patches (test/e2e/overlay,
// shorter-for-*.yaml), and the shipped ServiceMonitors scrape every 5s
// (shorter-scrape.yaml); the table states both `for`s.

// profileTitles name the monitoring profiles of docs/operations.md by the
// external label of their Prometheus.
var profileTitles = map[string]string{stack.ProfileAPIServer: "API server scraped", stack.ProfileShoot: "Shoot"}

// alertWatch follows the alerts of both profiles for one scenario after
// another, and keeps what it saw for the table.
type alertWatch struct {
	proms    map[string]promv1.API // by profile
	receiver *stack.AlertReceiver
	// shippedFor is each alert's `for` in deploy/default, loadedFor the
	// one Prometheus evaluates.
	shippedFor, loadedFor map[string]string
	rows                  []alertRow
	// fixes are the runbook Fixes the breaks proved (runbookfix_test.go).
	fixes []fixRow
	// traffic is the Kyma namespace where await creates Pods by dry run.
	traffic string
}

// alertRow is one alert of one scenario in one profile, each time from
// the break: pending is when its condition first held.
type alertRow struct {
	scenario, profile, alert  string
	pending, firing, received time.Duration
}

// newAlertWatch returns the watch, or nil where the suite runs no
// Prometheus stack (kind): there the rule unit tests (test/manifests) are
// the alerts' only witness.
func newAlertWatch(t *testing.T) *alertWatch {
	t.Helper()
	ns, ok := sys.(*nodeSystem)
	if !ok {
		t.Logf("%T runs no Prometheus stack; the alerts are covered by the rule unit tests alone", sys)
		return nil
	}
	w := &alertWatch{proms: map[string]promv1.API{}, receiver: ns.alerts, shippedFor: shippedAlertFor(t), loadedFor: map[string]string{},
		traffic: namespace(t, "e2e-alerts", true)}
	for profile, name := range stack.Profiles {
		prom, err := stack.Prometheus(t.Context(), sys.Clientset(), name)
		if err != nil {
			t.Fatal(err)
		}
		w.proms[profile] = prom
	}
	// prometheus-operator hands Prometheus the rules a moment after the
	// installation.
	what := "Prometheus " + stack.Profiles[stack.ProfileAPIServer] + " to load an alerting rule"
	poll.Eventually(t, what, func(ctx context.Context) error {
		res, err := w.proms[stack.ProfileAPIServer].Rules(ctx, nil)
		if err != nil {
			return err
		}
		for _, g := range res.Groups {
			for _, r := range g.Rules {
				if a, ok := r.(promv1.AlertingRule); ok {
					w.loadedFor[a.Name] = model.Duration(time.Duration(a.Duration * float64(time.Second))).String()
				}
			}
		}
		if len(w.loadedFor) == 0 {
			return fmt.Errorf("no alerting rule in %d groups", len(res.Groups))
		}
		return nil
	}, poll.Timeout(3*time.Minute))
	return w
}

// windowed are the counters whose alerts look back over minutes, and the
// jobs that expose them, by profile: KimSnatchWebhookFailingOpen counts
// the fail-opens of the last 10 minutes, KimSnatchCABundleSyncErrors the
// syncer's errors of the last 5 and
// KimSnatchWebhookCertificateReloadFailing the failed loads of the last
// 10, so each would still fire for the scenario before.
var windowed = map[string]struct{ series, jobs []string }{
	stack.ProfileAPIServer: {
		series: []string{fmt.Sprintf(`{__name__=~"apiserver_admission_webhook_.+", name=%q}`, stack.WebhookEntryName),
			"cabundle_syncer_errors_total", "snatch_webhook_cert_reloads_total"},
		jobs: []string{"apiserver", "cabundle-syncer-metrics", "snatch-webhook-metrics"},
	},
	stack.ProfileShoot: {
		series: []string{"cabundle_syncer_errors_total", "snatch_webhook_cert_reloads_total"},
		jobs:   []string{"cabundle-syncer-metrics", "snatch-webhook-metrics"},
	},
}

// clearHistory deletes the history of the windowed counters in both
// profiles, and waits until every target that exposes them has been
// scraped again, so that a rise from now on shows. The counters go on from
// their current values.
func (w *alertWatch) clearHistory(t *testing.T) {
	t.Helper()
	cleared := w.deleteHistory(t)
	what := "the targets of the windowed counters to be scraped after their clearing at " + cleared.Format(time.TimeOnly)
	poll.Eventually(t, what, func(ctx context.Context) error {
		return w.rescraped(ctx, cleared)
	}, poll.Timeout(2*time.Minute))
}

// deleteHistory deletes the history of the windowed counters in both
// profiles and returns when.
func (w *alertWatch) deleteHistory(t *testing.T) time.Time {
	t.Helper()
	at := time.Now()
	for profile, prom := range w.proms {
		if err := prom.DeleteSeries(t.Context(), windowed[profile].series, time.Unix(0, 0), at); err != nil {
			t.Fatalf("clear the history of %v in the %s profile: %v", windowed[profile].series, profileTitles[profile], err)
		}
	}
	return at
}

// rescraped returns nil once each profile has scraped every target of the
// windowed counters' jobs since cleared, and otherwise what it has not. A
// target's labels are those Prometheus gives its series.
func (w *alertWatch) rescraped(ctx context.Context, cleared time.Time) error {
	for profile, prom := range w.proms {
		res, err := prom.Targets(ctx)
		if err != nil {
			return fmt.Errorf("the %s profile's targets: %w", profileTitles[profile], err)
		}
		found := map[string]bool{}
		for _, tgt := range res.Active {
			job := string(tgt.Labels["job"])
			if !slices.Contains(windowed[profile].jobs, job) {
				continue
			}
			found[job] = true
			if !tgt.LastScrape.After(cleared) {
				return fmt.Errorf("the %s profile last scraped %s of job %s at %s",
					profileTitles[profile], tgt.ScrapeURL, job, tgt.LastScrape.Format(time.TimeOnly))
			}
		}
		if len(found) != len(windowed[profile].jobs) {
			return fmt.Errorf("the %s profile has targets of the jobs %v, want %v",
				profileTitles[profile], slices.Sorted(maps.Keys(found)), windowed[profile].jobs)
		}
	}
	return nil
}

// quiet waits until no alert of want is active in its profile, so that
// each fires anew for the next scenario. Where one is still active, the
// history of the windowed counters is cleared once, as a counter's window
// would keep it active for minutes, and quiet waits until they are
// scraped again too.
func (w *alertWatch) quiet(t *testing.T, want map[string][]string) {
	t.Helper()
	var cleared time.Time
	what := "no alert of the scenario active from before it, and the counters scraped again"
	poll.Eventually(t, what, func(ctx context.Context) error {
		active := map[string][]string{}
		for profile, prom := range w.proms {
			alerts, err := activeAlerts(ctx, prom)
			if err != nil {
				return fmt.Errorf("the %s profile's alerts: %w", profileTitles[profile], err)
			}
			for _, a := range alerts {
				if name := alertName(a); slices.Contains(want[profile], name) {
					active[profile] = append(active[profile], name)
				}
			}
		}
		if len(active) > 0 && cleared.IsZero() {
			cleared = w.deleteHistory(t)
		}
		if len(active) > 0 {
			return fmt.Errorf("active: %v", active)
		}
		if cleared.IsZero() {
			return nil
		}
		return w.rescraped(ctx, cleared)
	}, poll.Timeout(3*time.Minute))
}

// await waits until every alert of want fires in its profile's Prometheus,
// its condition having first held after broken, and Alertmanager has sent
// it to the receiver with its severity and runbook; then it asserts that
// no other alert has fired since broken, and that the panel of change, if
// any, shows the break in the API server scraped profile. Meanwhile a Kyma
// Pod is created by dry run every 2 s, as a cluster's traffic would: a
// fault in reaching the webhook shows only in calls.
//
// maybe are alerts that may fire beside want in either profile without
// being required.
func (w *alertWatch) await(t *testing.T, scenario string, broken time.Time, want map[string][]string, maybe []string, change panelChange) {
	t.Helper()
	p := newAlertProgress(t, scenario, broken, want, maybe, change)
	done := func(ctx context.Context) error {
		w.createTrafficPod(ctx, t)
		if err := p.seeAlerts(ctx, w); err != nil {
			return err
		}
		p.seeNotifications(t, w)
		p.seePanel(ctx, w)
		return p.complete()
	}
	// Either all is seen within 5m, or what is missing is reported below.
	// The pace is that of the traffic, and of the times the table reports.
	_ = poll.Until(t.Context(), "the alerts of "+scenario, done, poll.Timeout(5*time.Minute), trafficPace)
	w.record(t, scenario, p, want, change)
}

// createTrafficPod creates one Kyma Pod by dry run, as a cluster's
// traffic would: a fault in reaching the webhook shows only in calls.
func (w *alertWatch) createTrafficPod(ctx context.Context, t *testing.T) {
	_, err := sys.Clientset().CoreV1().Pods(w.traffic).Create(ctx, gatedPod("traffic"), metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
	if err != nil {
		t.Logf("create a Pod in %s by dry run: %v", w.traffic, err)
	}
}

// trafficPace paces the waits that create a Kyma Pod by dry run at each
// attempt, as a cluster's traffic would.
var trafficPace = poll.Interval(2 * time.Second)

// alertKey is an alert in the Prometheus of a profile.
type alertKey struct{ profile, alert string }

// alertProgress is what await has seen of a scenario since broken.
type alertProgress struct {
	broken time.Time
	want   map[string][]string
	maybe  []string
	rows   map[alertKey]*alertRow
	others map[string]bool // profile/alert, fired though not wanted
	shown  bool
	panel  string
}

func newAlertProgress(t *testing.T, scenario string, broken time.Time, want map[string][]string, maybe []string, change panelChange) *alertProgress {
	t.Helper()
	p := &alertProgress{broken: broken, want: want, maybe: maybe, rows: map[alertKey]*alertRow{}, others: map[string]bool{}}
	for profile, alerts := range want {
		for _, a := range alerts {
			p.rows[alertKey{profile, a}] = &alertRow{scenario: scenario, profile: profile, alert: a}
		}
	}
	p.shown = true
	if change != (panelChange{}) {
		p.shown, p.panel = false, panelExpr(t, change)
	}
	return p
}

// seeAlerts notes when each wanted alert was first pending and firing,
// and each other alert that fires; it returns the error of a Prometheus
// that did not answer.
func (p *alertProgress) seeAlerts(ctx context.Context, w *alertWatch) error {
	now := time.Now()
	for profile, prom := range w.proms {
		alerts, err := activeAlerts(ctx, prom)
		if err != nil {
			return fmt.Errorf("the %s profile's alerts: %w", profileTitles[profile], err)
		}
		for _, a := range alerts {
			if a.ActiveAt.Before(p.broken) {
				continue // from a scenario before, as quiet allowed
			}
			name := alertName(a)
			r, ok := p.rows[alertKey{profile, name}]
			if !ok {
				if a.State == promv1.AlertStateFiring && !excusedBurn(name, p.want[profile]) && !slices.Contains(p.maybe, name) {
					p.others[profile+"/"+name] = true
				}
				continue
			}
			if d := a.ActiveAt.Sub(p.broken); r.pending == 0 || d < r.pending {
				r.pending = d // the first of its series to hold
			}
			if a.State == promv1.AlertStateFiring && r.firing == 0 {
				r.firing = now.Sub(p.broken)
			}
		}
	}
	return nil
}

// seeNotifications notes when each wanted alert first reached the
// receiver, and asserts what it carried.
func (p *alertProgress) seeNotifications(t *testing.T, w *alertWatch) {
	for _, n := range w.receiver.Received(p.broken) {
		r, ok := p.rows[alertKey{n.Labels["profile"], n.Labels[model.AlertNameLabel]}]
		if ok && n.Status == "firing" && r.received == 0 {
			r.received = n.Received.Sub(p.broken)
			assertNotified(t, n)
		}
	}
}

// seePanel notes whether the panel shows the break in the API server
// scraped profile.
func (p *alertProgress) seePanel(ctx context.Context, w *alertWatch) {
	if !p.shown {
		v, _, _, err := w.proms[stack.ProfileAPIServer].Query(ctx, p.panel, time.Now())
		p.shown = err == nil && hasData(v)
	}
}

// complete returns nil once every wanted alert fired and was received, and
// the panel shows the break, and otherwise what is missing.
func (p *alertProgress) complete() error {
	var missing []string
	for k, r := range p.rows {
		if r.firing == 0 || r.received == 0 {
			missing = append(missing, fmt.Sprintf("%s in the %s profile (pending after %s, firing after %s, received after %s)",
				k.alert, profileTitles[k.profile], r.pending, r.firing, r.received))
		}
	}
	if !p.shown {
		missing = append(missing, "the panel's data")
	}
	if len(missing) > 0 {
		slices.Sort(missing)
		return fmt.Errorf("missing: %s", strings.Join(missing, "; "))
	}
	return nil
}

// record adds the scenario's rows to the table, and fails t for what was
// missing or fired though not wanted.
func (w *alertWatch) record(t *testing.T, scenario string, p *alertProgress, want map[string][]string, change panelChange) {
	t.Helper()
	for _, k := range slices.SortedFunc(maps.Keys(p.rows), func(a, b alertKey) int {
		return strings.Compare(a.profile+a.alert, b.profile+b.alert)
	}) {
		r := p.rows[k]
		w.rows = append(w.rows, *r)
		if r.firing == 0 || r.received == 0 {
			t.Errorf("%s, %s profile: %s did not fire and reach Alertmanager within 5m (pending after %s, firing after %s, received after %s)",
				scenario, profileTitles[r.profile], r.alert, r.pending, r.firing, r.received)
		}
	}
	if len(p.rows) == 0 {
		w.rows = append(w.rows, alertRow{scenario: scenario})
	}
	if len(p.others) > 0 {
		t.Errorf("%s: alerts fired that the scenario does not raise: %v, want only %v", scenario, slices.Sorted(maps.Keys(p.others)), want)
	}
	if !p.shown {
		t.Errorf("%s: dashboard %q, panel %q does not show %s in Prometheus", scenario, change.dashboard, change.panel, showing(change))
	}
}

// assertNone asserts that no alert fires in either profile: the healthy
// installation. The history of the windowed counters is cleared first, and
// what the installation or the tests before raised settles; alerts still
// pending are logged.
func (w *alertWatch) assertNone(t *testing.T, scenario string) {
	t.Helper()
	w.clearHistory(t)
	var firing, pending []string
	err := poll.Until(t.Context(), "no alert to fire", func(ctx context.Context) error {
		var f, p []string
		for profile, prom := range w.proms {
			alerts, err := activeAlerts(ctx, prom)
			if err != nil {
				return fmt.Errorf("the %s profile's alerts: %w", profileTitles[profile], err)
			}
			for _, a := range alerts {
				if a.State == promv1.AlertStateFiring {
					f = append(f, profile+"/"+alertName(a))
				} else {
					p = append(p, profile+"/"+alertName(a))
				}
			}
		}
		firing, pending = f, p
		if len(firing) > 0 {
			return fmt.Errorf("firing: %v", firing)
		}
		return nil
	}, poll.Timeout(3*time.Minute))
	if err != nil {
		t.Errorf("%s: %v", scenario, err)
	}
	if len(pending) > 0 {
		logf("%s: alerts pending, not firing: %v", scenario, pending)
	}
	w.rows = append(w.rows, alertRow{scenario: scenario})
}

// table logs what the watch saw, one line per scenario, profile and alert.
func (w *alertWatch) table() {
	var b strings.Builder
	b.WriteString("| scenario | profile | alert (for here / shipped) | pending after | firing after | received after |\n|---|---|---|---|---|---|\n")
	for _, r := range w.rows {
		if r.alert == "" {
			fmt.Fprintf(&b, "| %s | both | none | | | |\n", r.scenario)
			continue
		}
		fmt.Fprintf(&b, "| %s | %s | %s (%s / %s) | %s | %s | %s |\n", r.scenario, profileTitles[r.profile], r.alert,
			w.loadedFor[r.alert], w.shippedFor[r.alert], r.pending.Round(time.Second), r.firing.Round(time.Second), r.received.Round(time.Second))
	}
	logf("alerts of the breaks, from the break:\n%s", b.String())
}

// assertNotified fails t unless a notification carries what an operator
// acts on: a severity and the runbook of its alert.
func assertNotified(t *testing.T, n stack.Notification) {
	t.Helper()
	alert := n.Labels[model.AlertNameLabel]
	if sev := n.Labels["severity"]; sev != "critical" && sev != "warning" {
		t.Errorf("Alertmanager sent %s with severity %q", alert, sev)
	}
	if !strings.HasSuffix(n.Annotations["runbook_url"], "#"+strings.ToLower(alert)) {
		t.Errorf("Alertmanager sent %s with runbook_url %q", alert, n.Annotations["runbook_url"])
	}
}

// excusedBurn reports whether alert is a burn-rate alert that may fire
// beside want: each objective's burn alerts watch the same calls as the
// alert of its symptom. A call that fails open is a term error, so the term
// objective burns only where KimSnatchWebhookFailingOpen fires too. The
// latency objective burns whenever calls are slow; but a burst of
// unthrottled creates on two busy cores makes some calls slower than the
// latency objective without the sustained p99 of KimSnatchWebhookCallsSlow.
func excusedBurn(alert string, want []string) bool {
	switch {
	case strings.HasPrefix(alert, "KimSnatchTermSLO"):
		return slices.Contains(want, alertFailingOpen)
	case strings.HasPrefix(alert, "KimSnatchLatencySLO"):
		return true
	}
	return false
}

// active holds once alert is pending or firing in the Prometheus of
// profile, and otherwise reports the alerts active there.
func (w *alertWatch) active(profile, alert string) poll.Condition {
	return func(ctx context.Context) error {
		alerts, err := activeAlerts(ctx, w.proms[profile])
		if err != nil {
			return err
		}
		var others []string
		for _, a := range alerts {
			if alertName(a) == alert {
				return nil
			}
			others = append(others, alertName(a)+" "+string(a.State))
		}
		return fmt.Errorf("active: %v", others)
	}
}

// activeAlerts returns the pending and firing alerts of prom.
func activeAlerts(ctx context.Context, prom promv1.API) ([]promv1.Alert, error) {
	res, err := prom.Alerts(ctx)
	if err != nil {
		return nil, err
	}
	return res.Alerts, nil
}

func alertName(a promv1.Alert) string { return string(a.Labels[model.AlertNameLabel]) }

// shippedAlertFor returns each alert's `for` in deploy/default.
func shippedAlertFor(t *testing.T) map[string]string {
	t.Helper()
	rendered, err := framework.Kustomize("deploy/default")
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, rule := range prometheusRules(t, rendered) {
		if name, ok := rule["alert"].(string); ok {
			out[name], _ = rule["for"].(string)
		}
	}
	return out
}

// prometheusRules returns every rule of every PrometheusRule in rendered
// manifests, in order.
func prometheusRules(t *testing.T, rendered []byte) []map[string]any {
	t.Helper()
	var out []map[string]any
	objs, err := objects.Decode(rendered)
	if err != nil {
		t.Fatal(err)
	}
	for _, u := range objects.OfKind(objs, "PrometheusRule") {
		groups, _, _ := unstructured.NestedSlice(u.Object, "spec", "groups")
		for _, g := range groups {
			rules, _, _ := unstructured.NestedSlice(g.(map[string]any), "rules")
			for _, r := range rules {
				out = append(out, r.(map[string]any))
			}
		}
	}
	return out
}

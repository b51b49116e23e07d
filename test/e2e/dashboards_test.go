package e2e

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kyma-project/kim-snatch/test/framework"
)

// DashboardsEnv names the dashboard generator that `make tools` builds from
// hack/tools/dashboards; make exports it.
const DashboardsEnv = "SNATCH_DASHBOARDS"

// panelQuery is one query of one panel, as `dashboards queries` lists it
// and `promrules eval` answers it.
type panelQuery struct {
	Dashboard string `json:"dashboard"`
	Panel     string `json:"panel"`
	RefID     string `json:"refId"`
	Expr      string `json:"expr"`
	Samples   int    `json:"samples,omitempty"`
}

// panelChange is what a panel shows while a break lasts, as a PromQL
// comparison on its first query: it holds there and not on a healthy
// installation.
type panelChange struct {
	dashboard, panel, holds string
}

// breakPanels are the panels that show a break of the check's table.
var breakPanels = map[string]panelChange{
	"all_webhook_replicas_stopped":                   {"KIM Snatch / snatch-webhook", "Ready replicas", "== 0"},
	"webhook_service_deleted":                        {"KIM Snatch / snatch-webhook", "Fail-open rate", "> 0"},
	"ca_bundle_wiped_while_the_leader_may_not_patch": {"KIM Snatch / cabundle-syncer", "caBundle in sync", "== 0"},
}

// Every query of every panel of deploy/components/dashboards, evaluated
// with Prometheus' engine on the live scrapes of a healthy installation
// (the binaries, kube-apiserver and the kube-state-metrics stand-in),
// after the shipped rules and the fleet rules: none shows "No data", and
// none shows a break of breakPanels. Between the two scrapes Kyma Pods
// are created and the CA is renewed, as a cluster's traffic and
// cert-management would, so that rates and latency quantiles have samples.
func TestDashboardsShowDataOnAHealthyInstallation(t *testing.T) {
	alerts := newAlertRules(t)
	if alerts == nil {
		t.Skipf("%T cannot be scraped from here", sys)
	}
	before := alerts.scrape(t)
	ns := namespace(t, "e2e-dashboards", true)
	for range 20 {
		if _, err := sys.Clientset().CoreV1().Pods(ns).Create(t.Context(), gatedPod("traffic"), metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}}); err != nil {
			t.Fatal(err)
		}
	}
	// A renewal, as cert-management does it, so that the syncer reconciles
	// between the scrapes. The overlap keeps the old CA trusted while the
	// kubelet swaps the replicas' files.
	fp, err := sys.Renew(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if err := sys.WaitBundleHas(t.Context(), time.Minute, fp); err != nil {
		t.Fatal(err)
	}
	now := alerts.scrape(t)

	results := alerts.evalPanels(t, before, now, panelQueries(t))
	shown := 0
	for _, r := range results {
		if r.Samples == 0 {
			t.Errorf("dashboard %q, panel %q shows No data: %s", r.Dashboard, r.Panel, r.Expr)
			continue
		}
		shown++
	}
	logf("dashboards: %d of %d queries show data on the live scrapes", shown, len(results))
	for name, change := range breakPanels {
		if alerts.panelShows(t, before, now, change) {
			t.Errorf("a healthy installation shows the break %s: %s %q %s", name, change.dashboard, change.panel, change.holds)
		}
	}
}

// assertPanelShows fails t unless the panel of break name shows it on the
// scrapes.
func (a *alertRules) assertPanelShows(t *testing.T, name string, before, now scrape) {
	t.Helper()
	change, ok := breakPanels[name]
	if !ok {
		return
	}
	if !a.panelShows(t, before, now, change) {
		t.Errorf("%s: dashboard %q, panel %q does not show %s", name, change.dashboard, change.panel, change.holds)
		return
	}
	logf("%s: dashboard %q, panel %q shows %s", name, change.dashboard, change.panel, change.holds)
}

// panelShows reports whether change's comparison holds on the panel's
// first query.
func (a *alertRules) panelShows(t *testing.T, before, now scrape, change panelChange) bool {
	t.Helper()
	for _, q := range panelQueries(t) {
		if q.Dashboard == change.dashboard && q.Panel == change.panel {
			q.Expr = "(" + q.Expr + ") " + change.holds
			return a.evalPanels(t, before, now, []panelQuery{q})[0].Samples > 0
		}
	}
	t.Fatalf("no panel %q in dashboard %q", change.panel, change.dashboard)
	return false
}

// panelQueries lists every query of every panel of the shipped
// dashboards, with the variables set for this installation.
func panelQueries(t *testing.T) []panelQuery {
	t.Helper()
	bin := os.Getenv(DashboardsEnv)
	if bin == "" {
		t.Fatalf("$%s is not set: run the suite with make e2e, which builds it", DashboardsEnv)
	}
	root, err := framework.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	files, err := filepath.Glob(filepath.Join(root, "deploy/components/dashboards/*.json"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no dashboards in deploy/components/dashboards (%v)", err)
	}
	out, err := exec.Command(bin, append([]string{"queries", "-namespace", "kyma-system"}, files...)...).Output()
	if err != nil {
		t.Fatalf("%s queries: %v", bin, err)
	}
	var qs []panelQuery
	if err := json.Unmarshal(out, &qs); err != nil {
		t.Fatalf("%s queries printed %q: %v", bin, out, err)
	}
	return qs
}

// evalPanels evaluates the queries with Prometheus' engine on the two
// scrapes, after the shipped rules and the fleet rules.
func (a *alertRules) evalPanels(t *testing.T, before, now scrape, qs []panelQuery) []panelQuery {
	t.Helper()
	root, err := framework.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	in, err := json.Marshal(qs)
	if err != nil {
		t.Fatal(err)
	}
	args := []string{"eval", "-queries", "-"}
	for _, m := range before {
		args = append(args, "-before", m)
	}
	for _, m := range now {
		args = append(args, "-metrics", m)
	}
	args = append(args, a.rules, filepath.Join(root, "deploy/components/fleet/prometheusrule.yaml"))
	cmd := exec.Command(a.bin, args...)
	cmd.Stdin = bytes.NewReader(in)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	runErr := cmd.Run() // exits 1 when a query returned nothing
	var res struct {
		Results []panelQuery `json:"results"`
	}
	if err := json.Unmarshal(stdout.Bytes(), &res); err != nil || len(res.Results) != len(qs) {
		t.Fatalf("promrules eval: %v (%v), %d results for %d queries\n%s", err, runErr, len(res.Results), len(qs), stderr.String())
	}
	return res.Results
}

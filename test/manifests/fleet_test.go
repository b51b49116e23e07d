package manifests

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"

	"github.com/kyma-project/kim-snatch/test/framework/objects"
	"github.com/kyma-project/kim-snatch/test/process"
	"github.com/kyma-project/kim-snatch/test/tools"
)

const fleetComponent = "deploy/components/fleet"

// buildInfo are the build-info gauges the fleet records read, one per
// binary, value 1, with the labels the fleet's version records keep.
var buildInfo = map[string][]string{
	"snatch_webhook_build_info":  {"version", "revision", "goversion"},
	"cabundle_syncer_build_info": {"version", "revision", "goversion"},
}

// The component adds exactly one PrometheusRule to an overlay, labelled
// for the Prometheus ruleSelector, that the rule checker accepts; its
// records are all kim_snatch:fleet_* (what a federation match[] names) and
// read only this project's metrics and records, the fleet records before
// them, the build-info gauges, the series of other components that the
// alerts already read, and the firing critical alerts of KIM Snatch.
func TestFleetComponentShipsTheFleetRecords(t *testing.T) {
	objs := renderOverlay(t, "components:\n  - ../../"+fleetComponent+"\n")
	base := render(t, defaultInstall)
	prs := objects.OfKind(objs, "PrometheusRule")
	if len(objs) != len(base)+1 || len(prs) != len(objects.OfKind(base, "PrometheusRule"))+1 {
		t.Fatalf("the overlay renders %d objects, want the %d of %s and one PrometheusRule", len(objs), len(base), defaultInstall)
	}
	var fleet []rule
	for _, pr := range prs {
		if pr.GetName() != "kim-snatch-fleet" {
			continue
		}
		if got := pr.GetLabels()[prometheusLabel]; got != prometheusLabelValue {
			t.Errorf("%s has %s=%q, want %q", id(pr), prometheusLabel, got, prometheusLabelValue)
		}
		path, n := ruleFile(t, pr)
		if r, err := (process.Command{}).Run(t.Context(), promrules(t), "check", path); err != nil || n == 0 {
			t.Fatalf("promrules check %s: %v, %d rules\n%s", id(pr), err, n, r)
		}
		fleet = selectorsOf(t, path)
	}
	if len(fleet) == 0 {
		t.Fatal("the component renders no PrometheusRule kim-snatch-fleet")
	}
	ours := codeMetricLabels(t)
	records := map[string]bool{}
	for _, r := range alerts(t) {
		records[r.Record] = r.Record != ""
	}
	for _, r := range fleet {
		if r.Alert != "" || !strings.HasPrefix(r.Record, "kim_snatch:fleet_") {
			t.Errorf("rule %s%s: the fleet group holds only kim_snatch:fleet_* records", r.Alert, r.Record)
		}
		if !strings.Contains(r.Expr, "by (cluster") {
			t.Errorf("record %s does not keep the label cluster", r.Record)
		}
		for _, s := range r.Selectors {
			_, info := buildInfo[s.Metric]
			switch {
			case s.Metric == "ALERTS":
				checkCriticalAlerts(t, r)
			case s.Metric == "up", records[s.Metric], externalSeries[s.Metric] != "":
			case info:
				for _, l := range buildInfo[s.Metric] {
					if !strings.Contains(r.Expr, l) {
						t.Errorf("record %s drops the label %s of %s", r.Record, l, s.Metric)
					}
				}
			case ours[s.Metric] != nil:
			default:
				t.Errorf("record %s reads %s: neither the binaries' metric, a record, nor a listed series", r.Record, s.Metric)
			}
		}
		records[r.Record] = true
	}
}

// criticalAlerts are the matchers, sorted, by which a fleet record reads
// ALERTS: the firing critical alerts of KIM Snatch, the fleet's own aside.
var criticalAlerts = []string{`alertname!~"KimSnatchFleet.+"`, `alertname=~"KimSnatch.+"`, `alertstate="firing"`, `severity="critical"`}

// checkCriticalAlerts fails t unless every selector of ALERTS in r has
// exactly the matchers of criticalAlerts.
func checkCriticalAlerts(t *testing.T, r rule) {
	t.Helper()
	for _, s := range r.Selectors {
		if s.Metric != "ALERTS" {
			continue
		}
		var got []string
		for _, m := range s.Matchers {
			got = append(got, m.Name+m.Op+`"`+m.Value+`"`)
		}
		slices.Sort(got)
		if !slices.Equal(got, criticalAlerts) {
			t.Errorf("record %s reads ALERTS with %v, want %v: the firing critical alerts of KIM Snatch", r.Record, got, criticalAlerts)
		}
	}
}

// Each binary registers its build-info gauge, with the labels the fleet
// records keep; without it the fleet's version records stay empty.
func TestBuildInfoHasTheFleetLabels(t *testing.T) {
	ours := codeMetricLabels(t)
	for name, want := range buildInfo {
		got, ok := ours[name]
		if !ok {
			t.Errorf("%s is not registered by the packages codeMetricLabels builds; the fleet's version records stay empty without it", name)
			continue
		}
		for _, l := range want {
			if !got[l] {
				t.Errorf("%s lacks the label %s", name, l)
			}
		}
	}
}

// The fleet rule tests evaluate the records on three clusters' series, one
// of them a Shoot-profile runtime whose calls fail open.
func TestFleetRuleTestsCoverEveryRecord(t *testing.T) {
	tests, err := os.ReadFile(filepath.Join(ruleTestDir, "fleet.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range selectorsOf(t, filepath.Join(tools.MustRepoRoot(t), fleetComponent, "prometheusrule.yaml")) {
		if !bytes.Contains(tests, []byte("- expr: "+r.Record+"\n")) {
			t.Errorf("fleet.yaml has no promql_expr_test of %s", r.Record)
		}
	}
	for _, c := range []string{`cluster="eu-1"`, `cluster="us-1"`, `cluster="ap-1"`} {
		if !bytes.Contains(tests, []byte(c)) {
			t.Errorf("fleet.yaml lacks the series of %s", c)
		}
	}
}

// fleetShootDir holds the rule tests of the fleet records rendered with
// the cluster label shoot, whose series also feed the fleet dashboard
// rendered with it.
const fleetShootDir = "testdata/fleet-shoot"

// renderFleetShoot writes into a fresh directory the fleet records and the
// dashboards as `dashboards` renders them with -cluster-label shoot, and a
// copy of the rule tests of fleetShootDir beside the records.
func renderFleetShoot(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	tool := dashboardsTool(t)
	rules := []byte(process.Run(t, tool, "fleet-rules", "-cluster-label", "shoot"))
	tests, err := os.ReadFile(filepath.Join(fleetShootDir, "rules.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	for name, data := range map[string][]byte{"prometheusrule.yaml": rules, "rules.yaml": tests} {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	process.Run(t, tool, "generate", "-cluster-label", "shoot", "-o", dir)
	return dir
}

// Rendered with the label shoot, the fleet records keep every shoot apart
// where two shoots' series meet in one Prometheus, even when the series
// share a label cluster, and the rule checker accepts them.
func TestFleetRecordsWithShootKeepShootsApart(t *testing.T) {
	dir := renderFleetShoot(t)
	process.Run(t, promrules(t), "check", filepath.Join(dir, "prometheusrule.yaml"))
	r, err := process.Command{}.Run(t.Context(), promrules(t), "test", filepath.Join(dir, "rules.yaml"))
	if err != nil || !strings.Contains(r.Stdout, "SUCCESS") {
		t.Fatalf("promrules test of the fleet records with shoot: %v\n%s", err, r)
	}
	tests, err := os.ReadFile(filepath.Join(fleetShootDir, "rules.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range selectorsOf(t, filepath.Join(dir, "prometheusrule.yaml")) {
		if !bytes.Contains(tests, []byte("- expr: "+r.Record+"\n")) {
			t.Errorf("%s/rules.yaml has no promql_expr_test of %s", fleetShootDir, r.Record)
		}
	}
}

// fleetShootSeries returns the input series of the one test group of
// rules.yaml in dir, as promrules eval reads them.
func fleetShootSeries(t *testing.T, dir string) []byte {
	t.Helper()
	var tf struct {
		Tests []struct {
			Interval    string `json:"interval"`
			InputSeries []any  `json:"input_series"`
		} `json:"tests"`
	}
	data, err := os.ReadFile(filepath.Join(dir, "rules.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if err := yaml.Unmarshal(data, &tf); err != nil || len(tf.Tests) != 1 {
		t.Fatalf("%s/rules.yaml: %v, %d test groups, want 1", fleetShootDir, err, len(tf.Tests))
	}
	series, err := yaml.Marshal(map[string]any{"interval": tf.Tests[0].Interval, "input_series": tf.Tests[0].InputSeries})
	if err != nil {
		t.Fatal(err)
	}
	return series
}

// Rendered with the label shoot, every query of the fleet dashboard
// returns data on the series of the rule tests above, after the records
// rendered with shoot: its variable lists the shoots and no panel shows
// "No data".
func TestFleetDashboardWithShootReturnsData(t *testing.T) {
	dir := renderFleetShoot(t)
	var qs []panelQuery
	if err := json.Unmarshal([]byte(process.Run(t, dashboardsTool(t), "queries", filepath.Join(dir, "fleet.json"))), &qs); err != nil {
		t.Fatal(err)
	}
	// The variable's query, as Grafana asks it: the values of shoot.
	qs = append(qs, panelQuery{Dashboard: "KIM Snatch / fleet", Panel: "variable cluster", Expr: `count by (shoot) (kim_snatch:fleet_webhook_healthy)`})
	queries, err := json.Marshal(qs)
	if err != nil {
		t.Fatal(err)
	}
	series := fleetShootSeries(t, dir)
	seriesFile, queriesFile := filepath.Join(dir, "series.yaml"), filepath.Join(dir, "queries.json")
	for name, data := range map[string][]byte{seriesFile: series, queriesFile: queries} {
		if err := os.WriteFile(name, data, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	eval, err := process.Command{}.Run(t.Context(), promrules(t), "eval", "-series", seriesFile, "-at", "15m", "-interval", "1m", "-queries", queriesFile, filepath.Join(dir, "prometheusrule.yaml"))
	var res evalResult
	if jerr := json.Unmarshal([]byte(eval.Stdout), &res); jerr != nil {
		t.Fatalf("promrules eval: %v, %v\n%s", err, jerr, eval)
	}
	if len(res.Results) != len(qs) {
		t.Fatalf("promrules eval answered %d of %d queries", len(res.Results), len(qs))
	}
	for _, r := range res.Results {
		if r.Samples == 0 {
			t.Errorf("%s shows No data with shoot: %s", r.panelQuery, r.Expr)
		}
		if r.Panel == "variable cluster" && r.Samples != 2 {
			t.Errorf("the variable lists %d shoots, want the 2 that send the fleet records", r.Samples)
		}
	}
	if err != nil || len(res.NoData) > 0 {
		t.Errorf("promrules eval: %v, no data for %v", err, res.NoData)
	}
}

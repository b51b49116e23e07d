package manifests

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
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
// read only this project's metrics and records, the build-info gauges and
// the series of other components that the alerts already read.
func TestFleetComponentShipsTheFleetRecords(t *testing.T) {
	objs := renderOverlay(t, "components:\n  - ../../"+fleetComponent+"\n")
	base := render(t, defaultInstall)
	prs := ofKind(objs, "PrometheusRule")
	if len(objs) != len(base)+1 || len(prs) != len(ofKind(base, "PrometheusRule"))+1 {
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
		out, err := exec.Command(promrules(t), "check", path).CombinedOutput()
		if err != nil || n == 0 {
			t.Fatalf("promrules check %s: %v, %d rules\n%s", id(pr), err, n, out)
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

// The fleet rule tests evaluate the records on two clusters' series.
func TestFleetRuleTestsCoverEveryRecord(t *testing.T) {
	data, err := exec.Command(promrules(t), "selectors", filepath.Join(repoRoot(t), fleetComponent, "prometheusrule.yaml")).Output()
	if err != nil {
		t.Fatal(err)
	}
	tests, err := os.ReadFile(filepath.Join(ruleTestDir, "fleet.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range selectorsFromJSON(t, data) {
		if !bytes.Contains(tests, []byte("- expr: "+r.Record+"\n")) {
			t.Errorf("fleet.yaml has no promql_expr_test of %s", r.Record)
		}
	}
	for _, c := range []string{`cluster="eu-1"`, `cluster="us-1"`} {
		if !bytes.Contains(tests, []byte(c)) {
			t.Errorf("fleet.yaml lacks the series of %s", c)
		}
	}
}

func selectorsFromJSON(t *testing.T, data []byte) []rule {
	t.Helper()
	var rs []rule
	if err := json.Unmarshal(data, &rs); err != nil {
		t.Fatal(err)
	}
	return rs
}

package manifests

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kyma-project/kim-snatch/test/framework/objects"
	"github.com/kyma-project/kim-snatch/test/process"
	"github.com/kyma-project/kim-snatch/test/tools"
)

const (
	fleetAlertsComponent = "deploy/components/fleet-alerts"
	// fleetAlertsTests are the rule tests of the fleet alerts.
	fleetAlertsTests = "fleet-alerts.yaml"
)

// fleetAlertsRule renders the component into an overlay and returns its one
// PrometheusRule, which it adds to the installation and nothing else.
func fleetAlertsRule(t *testing.T) *unstructured.Unstructured {
	t.Helper()
	objs := renderOverlay(t, "components:\n  - ../../"+fleetAlertsComponent+"\n")
	base := render(t, defaultInstall)
	var added []*unstructured.Unstructured
	for _, pr := range objects.OfKind(objs, "PrometheusRule") {
		if pr.GetName() == "kim-snatch-fleet-alerts" {
			added = append(added, pr)
		}
	}
	if len(objs) != len(base)+1 || len(added) != 1 {
		t.Fatalf("the overlay renders %d objects, want the %d of %s and the PrometheusRule kim-snatch-fleet-alerts", len(objs), len(base), defaultInstall)
	}
	return added[0]
}

// The component adds one PrometheusRule, labelled for the Prometheus
// ruleSelector, that the rule checker accepts. It reads only the fleet
// records of deploy/components/fleet and its own records before them, so
// that the central Prometheus needs nothing but what the clusters send;
// each alert has a severity, the namespace it ships in and its runbook.
func TestFleetAlertsComponentReadsOnlyTheFleetRecords(t *testing.T) {
	pr := fleetAlertsRule(t)
	if got := pr.GetLabels()[prometheusLabel]; got != prometheusLabelValue {
		t.Errorf("%s has %s=%q, want %q", id(pr), prometheusLabel, got, prometheusLabelValue)
	}
	path, n := ruleFile(t, pr)
	if r, err := (process.Command{}).Run(t.Context(), promrules(t), "check", path); err != nil || n == 0 {
		t.Fatalf("promrules check %s: %v, %d rules\n%s", id(pr), err, n, r)
	}
	known := map[string]bool{}
	for _, r := range selectorsOf(t, filepath.Join(tools.MustRepoRoot(t), fleetComponent, "prometheusrule.yaml")) {
		known[r.Record] = true
	}
	for _, r := range selectorsOf(t, path) {
		for _, s := range r.Selectors {
			if !known[s.Metric] {
				t.Errorf("rule %s%s reads %s, which neither the fleet component nor a rule before it records", r.Alert, r.Record, s.Metric)
			}
		}
		if r.Record != "" {
			known[r.Record] = strings.HasPrefix(r.Record, "kim_snatch:fleet_")
		}
	}
	eachAlertOf(pr, func(name string, rule map[string]any) {
		labels, _, _ := unstructured.NestedStringMap(rule, "labels")
		if s := labels["severity"]; s != "critical" && s != "warning" {
			t.Errorf("alert %s has severity %q, want critical or warning", name, s)
		}
		if ns := labels["namespace"]; ns != pr.GetNamespace() {
			t.Errorf("alert %s sets namespace %q, but ships in %s", name, ns, pr.GetNamespace())
		}
		url, _, _ := unstructured.NestedString(rule, "annotations", "runbook_url")
		if want := "/docs/operations.md#" + strings.ToLower(name); !strings.HasSuffix(url, want) {
			t.Errorf("alert %s has runbook_url %q, want one ending in %s", name, url, want)
		}
	})
}

// eachAlertOf calls fn with every alerting rule of the PrometheusRule pr.
func eachAlertOf(pr *unstructured.Unstructured, fn func(name string, rule map[string]any)) {
	groups, _, _ := unstructured.NestedSlice(pr.Object, "spec", "groups")
	for _, g := range groups {
		rules, _, _ := unstructured.NestedSlice(g.(map[string]any), "rules")
		for _, r := range rules {
			rule := r.(map[string]any)
			if name, _, _ := unstructured.NestedString(rule, "alert"); name != "" {
				fn(name, rule)
			}
		}
	}
}

// The rule tests of the fleet alerts evaluate every record, alone or with
// a selector of its labels, and each alert stays silent before its `for`
// and fires after it on the same series, and fires nowhere before its
// `for`.
func TestFleetAlertsRuleTestsCoverEveryRuleAndFor(t *testing.T) {
	pr := fleetAlertsRule(t)
	path, _ := ruleFile(t, pr)
	tests, err := os.ReadFile(filepath.Join(ruleTestDir, fleetAlertsTests))
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range selectorsOf(t, path) {
		if r.Record != "" && !regexp.MustCompile(`- expr: `+regexp.QuoteMeta(r.Record)+`[{\n]`).Match(tests) {
			t.Errorf("%s has no promql_expr_test of %s", fleetAlertsTests, r.Record)
		}
	}
	sum := summarizeRuleTests(t, tools.MustRepoRoot(t))
	eachAlertOf(pr, func(name string, rule map[string]any) {
		forDur, err := time.ParseDuration(rule["for"].(string))
		if err != nil {
			t.Fatalf("alert %s: %v", name, err)
		}
		sum.checkFor(t, name, forDur)
	})
}

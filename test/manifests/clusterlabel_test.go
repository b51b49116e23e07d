package manifests

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kyma-project/kim-snatch/test/framework"
	"github.com/kyma-project/kim-snatch/test/process"
	"github.com/kyma-project/kim-snatch/test/tools"
)

// fleetRuleFiles are the PrometheusRules of the components that a fleet's
// central Prometheus runs, beside those of deploy/default.
var fleetRuleFiles = []string{
	"deploy/components/fleet/prometheusrule.yaml",
	"deploy/components/fleet-alerts/prometheusrule.yaml",
}

// A fleet whose runtime label is not cluster renames it with `promrules
// cluster-label` (docs/operations.md, "Monitoring profiles"). Renamed, no
// expression and no rule or group label names cluster, every expression
// that did names the new label, every rule still passes the rule checker,
// and the objects that are not PrometheusRules are as rendered.
func TestClusterLabelRenamesEveryRuleOfTheInstallation(t *testing.T) {
	const to = "runtime_id"
	tool := promrules(t)
	before, after := renameClusterLabel(t, tool, to)
	if len(after) != len(before) {
		t.Fatalf("%d objects out, %d in", len(after), len(before))
	}
	word := regexp.MustCompile(`\bcluster\b`)
	renamedWord := regexp.MustCompile(`\b` + to + `\b`)
	prs := 0
	for i, obj := range after {
		if obj.GetKind() != "PrometheusRule" {
			if !reflect.DeepEqual(obj.Object, before[i].Object) {
				t.Errorf("%s changed, and is no PrometheusRule", id(obj))
			}
			continue
		}
		prs++
		wasExprs := ruleExprs(t, before[i])
		for j, r := range ruleExprs(t, obj) {
			if word.MatchString(r.expr) {
				t.Errorf("%s: %s still names cluster:\n%s", id(obj), r.name, r.expr)
			}
			if word.MatchString(wasExprs[j].expr) && !renamedWord.MatchString(r.expr) {
				t.Errorf("%s: %s named cluster and does not name %s:\n%s", id(obj), r.name, to, r.expr)
			}
			if _, ok := r.labels["cluster"]; ok {
				t.Errorf("%s: %s still has the label cluster", id(obj), r.name)
			}
		}
		path, n := ruleFile(t, obj)
		r, err := process.Command{}.Run(t.Context(), tool, "check", path)
		if err != nil || !strings.Contains(r.Stdout, fmt.Sprintf("SUCCESS: %d rules found", n)) {
			t.Errorf("promrules check of the renamed %s: %v\n%s", id(obj), err, r)
		}
	}
	if want := len(prometheusRules(t)) + len(fleetRuleFiles); prs != want {
		t.Errorf("%d PrometheusRules renamed, want %d", prs, want)
	}
}

// renameClusterLabel runs `promrules cluster-label to` on the rendered
// installation and the components' rule files, as one stream on stdin,
// and returns the objects in and out.
func renameClusterLabel(t *testing.T, tool, to string) (before, after []*unstructured.Unstructured) {
	t.Helper()
	rendered, err := framework.Kustomize(defaultInstall)
	if err != nil {
		t.Fatal(err)
	}
	in := bytes.Clone(rendered)
	for _, f := range fleetRuleFiles {
		data, err := os.ReadFile(filepath.Join(tools.MustRepoRoot(t), f))
		if err != nil {
			t.Fatal(err)
		}
		in = append(append(in, "---\n"...), data...)
	}
	out := process.Command{Stdin: in}.MustRun(t, tool, "cluster-label", to)
	if before, err = decodeYAML(in); err != nil {
		t.Fatal(err)
	}
	if after, err = decodeYAML([]byte(out)); err != nil {
		t.Fatalf("the output is not YAML: %v\n%s", err, out)
	}
	return before, after
}

// ruleExpr is one rule's name, expression and labels, its group's labels
// among them.
type ruleExpr struct {
	name, expr string
	labels     map[string]any
}

func ruleExprs(t *testing.T, pr *unstructured.Unstructured) []ruleExpr {
	t.Helper()
	groups, _, err := unstructured.NestedSlice(pr.Object, "spec", "groups")
	if err != nil {
		t.Fatalf("%s: %v", id(pr), err)
	}
	var out []ruleExpr
	for _, g := range groups {
		group := g.(map[string]any)
		groupLabels, _, _ := unstructured.NestedMap(group, "labels")
		rules, _, _ := unstructured.NestedSlice(group, "rules")
		for _, r := range rules {
			rule := r.(map[string]any)
			name, _ := rule["alert"].(string)
			if name == "" {
				name, _ = rule["record"].(string)
			}
			expr, _ := rule["expr"].(string)
			labels, _, _ := unstructured.NestedMap(rule, "labels")
			if labels == nil {
				labels = map[string]any{}
			}
			for k, v := range groupLabels {
				labels[k] = v
			}
			out = append(out, ruleExpr{name: name, expr: expr, labels: labels})
		}
	}
	return out
}

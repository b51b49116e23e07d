package manifests

import (
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kyma-project/kim-snatch/test/framework/objects"
	"github.com/kyma-project/kim-snatch/test/process"
	"github.com/kyma-project/kim-snatch/test/tools"
)

// ruleTestDir holds the rule unit tests, in the format of `promtool test
// rules`; broken/ holds files with deliberately wrong expectations.
const ruleTestDir = "testdata/rules"

// ruleTestFile is the part of a rule unit-test file that says which alert
// each case expects to fire or to stay silent, and when.
type ruleTestFile struct {
	RuleFiles []string `json:"rule_files"`
	Tests     []struct {
		Name           string          `json:"name"`
		AlertRuleTests []alertRuleTest `json:"alert_rule_test"`
	} `json:"tests"`
}

// alertRuleTest is one expectation of a test group.
type alertRuleTest struct {
	EvalTime  string           `json:"eval_time"`
	Alertname string           `json:"alertname"`
	ExpAlerts []map[string]any `json:"exp_alerts"`
}

func ruleTestFiles(t *testing.T, dir string) []string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(dir, "*.yaml"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no rule unit tests in %s (%v)", dir, err)
	}
	return files
}

// Every alert of deploy/ is evaluated by Prometheus' rule engine on the
// series of its broken item and on healthy series, and behaves as each
// test file expects.
func TestAlertsFireOnBrokenSeriesAndStaySilentOnHealthy(t *testing.T) {
	files := ruleTestFiles(t, ruleTestDir)
	out := process.Run(t, promrules(t), append([]string{"test"}, files...)...)
	if n := strings.Count(out, "SUCCESS"); n != len(files) {
		t.Fatalf("promrules test reported %d successes for %d files\n%s", n, len(files), out)
	}
}

// ruleTestWindow is, for one alert in one test group (one set of series),
// the times at which the alert is expected silent and firing.
type ruleTestWindow struct{ silent, fires []time.Duration }

// ruleTestSummary is what the rule unit tests expect of each alert, and
// the rule files they load, relative to the repository root.
type ruleTestSummary struct {
	fires, silent map[string]bool
	firesAt       map[string][]time.Duration
	windows       map[string][]ruleTestWindow
	ruleFiles     []string
}

func summarizeRuleTests(t *testing.T, root string) *ruleTestSummary {
	t.Helper()
	sum := &ruleTestSummary{fires: map[string]bool{}, silent: map[string]bool{}, firesAt: map[string][]time.Duration{}, windows: map[string][]ruleTestWindow{}}
	for _, f := range ruleTestFiles(t, ruleTestDir) {
		tf := readRuleTestFile(t, f)
		for _, rf := range tf.RuleFiles {
			abs, err := filepath.Abs(filepath.Join(filepath.Dir(f), rf))
			if err != nil {
				t.Fatal(err)
			}
			rel, err := filepath.Rel(root, abs)
			if err != nil {
				t.Fatal(err)
			}
			sum.ruleFiles = append(sum.ruleFiles, filepath.ToSlash(rel))
		}
		for _, tg := range tf.Tests {
			sum.addGroup(t, f, tg.Name, tg.AlertRuleTests)
		}
	}
	return sum
}

// addGroup adds the expectations of one test group of file f.
func (sum *ruleTestSummary) addGroup(t *testing.T, f, name string, tests []alertRuleTest) {
	t.Helper()
	group := map[string]*ruleTestWindow{}
	for _, at := range tests {
		d, err := time.ParseDuration(at.EvalTime)
		if err != nil {
			t.Fatalf("%s, %q: eval_time %q: %v", f, name, at.EvalTime, err)
		}
		w := group[at.Alertname]
		if w == nil {
			w = &ruleTestWindow{}
			group[at.Alertname] = w
		}
		if len(at.ExpAlerts) == 0 {
			sum.silent[at.Alertname] = true
			w.silent = append(w.silent, d)
			continue
		}
		sum.fires[at.Alertname] = true
		sum.firesAt[at.Alertname] = append(sum.firesAt[at.Alertname], d)
		w.fires = append(w.fires, d)
	}
	for alert, w := range group {
		sum.windows[alert] = append(sum.windows[alert], *w)
	}
}

// Each alert has a case in which it fires, at or after its `for` and not
// before it on the same series, and one in which it stays silent; the test
// files cover the PrometheusRules of deploy/.
func TestEveryAlertHasAFiringAndASilentCase(t *testing.T) {
	root := tools.MustRepoRoot(t)
	sum := summarizeRuleTests(t, root)
	fires, silent, ruleFiles := sum.fires, sum.silent, sum.ruleFiles
	deployed, err := filepath.Glob(filepath.Join(root, "deploy", "*", "prometheusrule.yaml"))
	if err != nil || len(deployed) == 0 {
		t.Fatalf("no deploy/*/prometheusrule.yaml (%v)", err)
	}
	for _, d := range deployed {
		rel, _ := filepath.Rel(root, d)
		if !slices.Contains(ruleFiles, filepath.ToSlash(rel)) {
			t.Errorf("no rule unit test loads %s", rel)
		}
	}
	for _, r := range alerts(t) {
		if r.Alert == "" {
			continue
		}
		if !fires[r.Alert] {
			t.Errorf("alert %s has no rule unit test in which it fires", r.Alert)
		}
		if !silent[r.Alert] {
			t.Errorf("alert %s has no rule unit test in which it stays silent", r.Alert)
		}
		if r.For == "" {
			continue
		}
		forDur, err := time.ParseDuration(r.For)
		if err != nil {
			t.Fatalf("alert %s: for %q: %v", r.Alert, r.For, err)
		}
		sum.checkFor(t, r.Alert, forDur)
	}
}

// checkFor fails t when a test expects alert to fire before its `for`, or
// when no test expects it silent before its `for` and firing later on the
// same series.
func (sum *ruleTestSummary) checkFor(t *testing.T, alert string, forDur time.Duration) {
	t.Helper()
	for _, at := range sum.firesAt[alert] {
		if at < forDur {
			t.Errorf("alert %s is expected to fire at %s, before its for (%s) has passed", alert, at, forDur)
		}
	}
	if !slices.ContainsFunc(sum.windows[alert], func(w ruleTestWindow) bool {
		return slices.ContainsFunc(w.silent, func(s time.Duration) bool {
			return s < forDur && slices.ContainsFunc(w.fires, func(f time.Duration) bool { return f > s })
		})
	}) {
		t.Errorf("alert %s has no test that expects it silent before its for (%s) and firing later on the same series", alert, forDur)
	}
}

// A rule unit test that expects the wrong thing fails: otherwise the tests
// above would prove nothing.
func TestWrongRuleUnitTestsFail(t *testing.T) {
	tool := promrules(t)
	for _, f := range ruleTestFiles(t, filepath.Join(ruleTestDir, "broken")) {
		t.Run(strings.TrimSuffix(filepath.Base(f), ".yaml"), func(t *testing.T) {
			r, err := process.Command{}.Run(t.Context(), tool, "test", f)
			if r.Code != 1 {
				t.Fatalf("promrules test %s: %v, want exit code 1\n%s", f, err, r)
			}
			if !strings.Contains(r.Stderr, "FAILED") {
				t.Fatalf("promrules test %s did not report the failure\n%s", f, r)
			}
		})
	}
}

// kubeStateMetricsLabel is the name kube-state-metrics gives a Kubernetes
// label in kube_*_labels: label_ and the key with every character outside
// [a-zA-Z0-9_] replaced by _.
func kubeStateMetricsLabel(key string) string {
	return "label_" + regexp.MustCompile(`[^a-zA-Z0-9_]`).ReplaceAllString(key, "_")
}

// webhookManagedByValue returns the value of managedByLabel by which the
// webhook configuration selects namespaces.
func webhookManagedByValue(t *testing.T) string {
	t.Helper()
	var kymaNamespace string
	for _, e := range mutatingWebhook(t).NamespaceSelector.MatchExpressions {
		if e.Key == managedByLabel && len(e.Values) == 1 {
			kymaNamespace = e.Values[0]
		}
	}
	if v, ok := mutatingWebhook(t).NamespaceSelector.MatchLabels[managedByLabel]; ok {
		kymaNamespace = v
	}
	if kymaNamespace == "" {
		t.Fatalf("the webhook configuration does not select namespaces by %s", managedByLabel)
	}
	return kymaNamespace
}

// The placement rules name the pool the webhook prefers (its --worker-pool
// and --pool-label-key), the namespaces its configuration selects, its
// opt-out label, and the pool label in a Pod's own nodeSelector.
func TestPlacementRulesFollowTheWebhook(t *testing.T) {
	objs := render(t, defaultInstall)
	f := flags(t, container(t, deployment(t, objs, "snatch-webhook")))
	poolLabel := kubeStateMetricsLabel(f["pool-label-key"])
	managedBy := kubeStateMetricsLabel(managedByLabel)
	kymaNamespace := webhookManagedByValue(t)
	optOut := kubeStateMetricsLabel(optOutLabel)
	// kube_pod_nodeselectors names a Pod's nodeSelector keys as
	// kube_*_labels names labels, with the prefix nodeselector_.
	selfPinned := "nodeselector_" + strings.TrimPrefix(poolLabel, "label_")
	var pools, namespaces, optOuts, pinned int
	for _, r := range alerts(t) {
		for _, s := range r.Selectors {
			for _, m := range s.Matchers {
				switch {
				case strings.HasPrefix(m.Name, "label_worker") || m.Name == poolLabel:
					if m.Name != poolLabel {
						t.Errorf("rule %s%s selects %s, want the pool label %s", r.Alert, r.Record, m.Name, poolLabel)
					}
					if m.Value != "" {
						pools++
						if m.Value != f["worker-pool"] {
							t.Errorf("rule %s%s selects pool %q, but the webhook prefers --worker-pool=%s", r.Alert, r.Record, m.Value, f["worker-pool"])
						}
					}
				case strings.HasPrefix(m.Name, "nodeselector_"):
					pinned++
					if m.Name != selfPinned || m.Op != "!=" || m.Value != "" {
						t.Errorf("rule %s%s selects %s%s%q, want the Pods whose nodeSelector names the pool label: %s!=\"\"", r.Alert, r.Record, m.Name, m.Op, m.Value, selfPinned)
					}
				case m.Name == optOut:
					optOuts++
					if m.Op != "=" || m.Value != "true" {
						t.Errorf("rule %s%s selects %s%s%q, want =\"true\"", r.Alert, r.Record, m.Name, m.Op, m.Value)
					}
				case m.Name == managedBy && m.Op == "!=" && m.Value == "":
					// Whether kube-state-metrics exports the label at all,
					// not which namespaces it selects.
				case m.Name == managedBy:
					namespaces++
					if m.Op != "=" || m.Value != kymaNamespace {
						t.Errorf("rule %s%s selects %s%s%q, want =%q", r.Alert, r.Record, m.Name, m.Op, m.Value, kymaNamespace)
					}
				}
			}
		}
	}
	if pools == 0 || namespaces == 0 || optOuts == 0 || pinned == 0 {
		t.Fatalf("no rule selects the pool (%d), the Kyma namespaces (%d), the opted-out Pods (%d) or the Pods that pin a pool themselves (%d)",
			pools, namespaces, optOuts, pinned)
	}
}

// Every alert carries the namespace label that routes it to the team of
// the installation: every firing case of the rule unit tests expects one
// (the tool compares labels exactly), and a namespace set in the rule,
// where the expression keeps none, is the namespace the rule ships in.
func TestEveryAlertCarriesANamespace(t *testing.T) {
	for _, f := range ruleTestFiles(t, ruleTestDir) {
		tf := readRuleTestFile(t, f)
		for _, tg := range tf.Tests {
			for _, at := range tg.AlertRuleTests {
				for _, a := range at.ExpAlerts {
					labels, _ := a["exp_labels"].(map[string]any)
					if ns, _ := labels["namespace"].(string); ns == "" {
						t.Errorf("%s, %q: %s at %s is expected without a namespace label", f, tg.Name, at.Alertname, at.EvalTime)
					}
				}
			}
		}
	}
	eachShippedAlert(t, func(pr *unstructured.Unstructured, name string, rule map[string]any) {
		if ns, set, _ := unstructured.NestedString(rule, "labels", "namespace"); set && ns != pr.GetNamespace() {
			t.Errorf("alert %s sets namespace %q, but ships in %s", name, ns, pr.GetNamespace())
		}
	})
}

// readRuleTestFile reads the rule unit test file f; fields the tests do not
// name are the tool's business.
func readRuleTestFile(t *testing.T, f string) ruleTestFile {
	t.Helper()
	var tf ruleTestFile
	if err := objects.ReadFile(f, &tf); err != nil {
		t.Fatal(err)
	}
	return tf
}

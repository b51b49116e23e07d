package manifests

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"

	"github.com/kyma-project/kim-snatch/test/framework/objects"
	"github.com/kyma-project/kim-snatch/test/process"
	"github.com/kyma-project/kim-snatch/test/tools"
)

const (
	dashboardsComponent = "deploy/components/dashboards"
	// healthySeries is a healthy installation's series over an hour,
	// those of the binaries and those the panels read from
	// kube-state-metrics, the kube-apiserver and controller-runtime.
	healthySeries = "testdata/dashboards/healthy.yaml"
	// grafanaDashboardLabel is what the Grafana sidecar of
	// kube-prometheus-stack looks for by default.
	grafanaDashboardLabel = "grafana_dashboard"
)

// dashboardSeries are the series the dashboards read from other
// components besides those the alerts read (externalSeries): with their
// source. A panel that reads a series of neither list nor this project
// names something nothing here serves.
var dashboardSeries = map[string]string{
	"apiserver_admission_webhook_request_total":                     "kube-apiserver",
	"apiserver_admission_webhook_admission_duration_seconds_bucket": "kube-apiserver",
	"kube_node_status_allocatable":                                  "kube-state-metrics",
	"kube_pod_container_resource_requests":                          "kube-state-metrics",
	"kube_deployment_status_replicas":                               "kube-state-metrics",
	"kube_deployment_status_replicas_unavailable":                   "kube-state-metrics",
	"kube_pod_container_info":                                       "kube-state-metrics",
	"controller_runtime_reconcile_time_seconds_bucket":              "cabundle-syncer (controller-runtime)",
}

// dashboardsTool returns the dashboards tool built from
// hack/tools/dashboards (its own module, so the SDK stays out of go.mod).
func dashboardsTool(t testing.TB) string {
	t.Helper()
	return tools.Dashboards.Path(t)
}

// panelQuery is one query of one panel as `dashboards queries` lists it.
type panelQuery struct {
	Dashboard string `json:"dashboard"`
	Panel     string `json:"panel"`
	RefID     string `json:"refId"`
	Template  string `json:"template"`
	Expr      string `json:"expr"`
}

func (q panelQuery) String() string {
	return fmt.Sprintf("%s / %s / %s", q.Dashboard, q.Panel, q.RefID)
}

// shippedQueries lists the queries of the dashboard files the component
// ships, with the variables substituted for kyma-system and every cluster.
func shippedQueries(t *testing.T) ([]panelQuery, []byte) {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(tools.MustRepoRoot(t), dashboardsComponent, "*.json"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no dashboards in %s (%v)", dashboardsComponent, err)
	}
	out := process.Run(t, dashboardsTool(t), append([]string{"queries"}, files...)...)
	var qs []panelQuery
	if err := json.Unmarshal([]byte(out), &qs); err != nil {
		t.Fatalf("decode dashboards queries: %v\n%s", err, out)
	}
	if len(qs) == 0 {
		t.Fatal("the dashboards have no queries")
	}
	return qs, []byte(out)
}

// deployedRuleFiles are the PrometheusRules whose records the dashboards
// read, as they ship.
func deployedRuleFiles(t *testing.T) []string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(tools.MustRepoRoot(t), "deploy", "*", "prometheusrule.yaml"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no deploy/*/prometheusrule.yaml (%v)", err)
	}
	more, _ := filepath.Glob(filepath.Join(tools.MustRepoRoot(t), "deploy", "components", "*", "prometheusrule.yaml"))
	return append(files, more...)
}

// evalResult is what `promrules eval` prints.
type evalResult struct {
	Results []struct {
		panelQuery
		Samples int `json:"samples"`
	} `json:"results"`
	NoData []string `json:"noData"`
}

// evalQueries runs promrules eval on a series file after the shipped
// rules, and returns its answer and exit code.
func evalQueries(t *testing.T, series string, queries []byte) (evalResult, int) {
	t.Helper()
	qfile := filepath.Join(t.TempDir(), "queries.json")
	if err := os.WriteFile(qfile, queries, 0o600); err != nil {
		t.Fatal(err)
	}
	args := append([]string{"eval", "-series", series, "-at", "1h", "-interval", "1m", "-queries", qfile}, deployedRuleFiles(t)...)
	r, err := process.Command{}.Run(t.Context(), promrules(t), args...)
	if r.Code < 0 || r.Code > 1 {
		t.Fatal(err)
	}
	var res evalResult
	if jerr := json.Unmarshal([]byte(r.Stdout), &res); jerr != nil {
		t.Fatalf("promrules eval: %v\n%s", jerr, r)
	}
	return res, r.Code
}

// Every query of every panel returns data, evaluated with Prometheus'
// engine after the shipped rules, on a healthy installation's series (the
// series of kube-state-metrics, the kube-apiserver and controller-runtime
// fed from testdata/dashboards/healthy.yaml): no panel shows "No data".
func TestDashboardQueriesReturnData(t *testing.T) {
	qs, raw := shippedQueries(t)
	res, code := evalQueries(t, healthySeries, raw)
	if len(res.Results) != len(qs) {
		t.Fatalf("promrules eval answered %d of %d queries", len(res.Results), len(qs))
	}
	for _, r := range res.Results {
		if r.Samples == 0 {
			t.Errorf("%s shows No data on a healthy installation: %s", r.panelQuery, r.Expr)
		}
	}
	if code != 0 || len(res.NoData) > 0 {
		t.Errorf("promrules eval exit %d, no data for %v", code, res.NoData)
	}
}

// The check above can fail: on series without the binaries', the panels
// that read them show No data and promrules eval says so.
func TestDashboardQueriesWithoutDataFail(t *testing.T) {
	_, raw := shippedQueries(t)
	series := filepath.Join(t.TempDir(), "empty.yaml")
	data := "interval: 1m\ninput_series:\n  - series: 'up{job=\"kube-state-metrics\"}'\n    values: '1x70'\n"
	if err := os.WriteFile(series, []byte(data), 0o600); err != nil {
		t.Fatal(err)
	}
	res, code := evalQueries(t, series, raw)
	if code != 1 || len(res.NoData) == 0 {
		t.Fatalf("promrules eval on series without data: exit %d, no data for %d queries; want exit 1 and every query", code, len(res.NoData))
	}
}

// byClause matches the label list of by (...) and on (...).
var byClause = regexp.MustCompile(`\b(?:by|on)\s*\(([^)]*)\)`)

// shippedRecords returns the series that the shipped rules record.
func shippedRecords(t *testing.T) map[string]bool {
	t.Helper()
	records := map[string]bool{}
	for _, r := range alerts(t) {
		if r.Record != "" {
			records[r.Record] = true
		}
	}
	for _, f := range deployedRuleFiles(t) {
		for _, r := range selectorsOf(t, f) {
			if r.Record != "" {
				records[r.Record] = true
			}
		}
	}
	return records
}

// checkGroupsByKnownLabels checks that an aggregation of q over the
// binaries' metrics groups by labels those metrics have.
func checkGroupsByKnownLabels(t *testing.T, q panelQuery, ours map[string]map[string]bool, targetLabels []string) {
	t.Helper()
	known := map[string]bool{}
	for _, s := range querySelectors(t, q) {
		for l := range ours[s.Metric] {
			known[l] = true
		}
	}
	for _, m := range byClause.FindAllStringSubmatch(q.Template, -1) {
		for l := range strings.SplitSeq(m[1], ",") {
			if l = strings.TrimSpace(l); l != "" && !known[l] && !slices.Contains(targetLabels, l) {
				t.Errorf("groups by %s, a label the code does not give %s", l, q.Template)
			}
		}
	}
}

// The dashboards name what exists: the metric names and labels of the
// binaries' metrics as the code registers them, records of the shipped
// rules, and the series of other components that docs/operations.md
// lists; the pool they call the Kyma pool is the webhook's --worker-pool.
func TestDashboardsNameWhatExists(t *testing.T) {
	qs, _ := shippedQueries(t)
	ours := codeMetricLabels(t)
	records := shippedRecords(t)
	// Labels Prometheus gives every target, and the histogram bucket.
	targetLabels := []string{"job", "namespace", "pod", "instance", "service", "endpoint", "container", "cluster", "le"}
	pool := flags(t, container(t, deployment(t, render(t, defaultInstall), "snatch-webhook")))["worker-pool"]
	poolLabel := kubeStateMetricsLabel("worker.gardener.cloud/pool")
	for _, q := range qs {
		t.Run(strings.NewReplacer(" ", "_", "/", "", "-", "_").Replace(q.String()), func(t *testing.T) {
			allOurs := true
			for _, s := range querySelectors(t, q) {
				switch {
				case s.Metric == "up":
				case strings.HasPrefix(s.Metric, "snatch_webhook_") || strings.HasPrefix(s.Metric, "cabundle_syncer_"):
					labels, ok := ours[s.Metric]
					if !ok {
						t.Errorf("reads %s, which the binaries do not register", s.Metric)
						continue
					}
					for _, m := range s.Matchers {
						if !labels[m.Name] && !slices.Contains(targetLabels, m.Name) {
							t.Errorf("selects %s{%s}, a label the code does not give it", s.Metric, m.Name)
						}
					}
				case strings.HasPrefix(s.Metric, "kim_snatch:"):
					allOurs = false
					if !records[s.Metric] {
						t.Errorf("reads %s, which no shipped rule records", s.Metric)
					}
				default:
					allOurs = false
					if externalSeries[s.Metric] == "" && dashboardSeries[s.Metric] == "" {
						t.Errorf("reads %s, a series of no listed component", s.Metric)
					}
				}
				for _, m := range s.Matchers {
					if m.Name == poolLabel && m.Value != "" && m.Value != pool {
						t.Errorf("selects pool %q, but the webhook prefers --worker-pool=%s", m.Value, pool)
					}
				}
			}
			if !allOurs {
				return
			}
			checkGroupsByKnownLabels(t, q, ours, targetLabels)
		})
	}
}

// querySelectors returns the series selectors of one query, as promrules
// parses them with the PromQL parser: the query is written as a recording
// rule.
func querySelectors(t *testing.T, q panelQuery) []selector {
	t.Helper()
	file := filepath.Join(t.TempDir(), "query.rules.yaml")
	data, err := yaml.Marshal(map[string]any{"groups": []any{map[string]any{"name": "q", "rules": []any{map[string]any{"record": "q", "expr": q.Expr}}}}})
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(file, data, 0o600); err != nil {
		t.Fatal(err)
	}
	rs := selectorsOf(t, file)
	if len(rs) != 1 {
		t.Fatalf("promrules selectors returned %d rules for one query", len(rs))
	}
	return rs[0].Selectors
}

// selector is one series selector of a rule or query, as `promrules
// selectors` describes it.
type selector = struct {
	Metric   string `json:"metric"`
	Matchers []struct {
		Name  string `json:"name"`
		Op    string `json:"op"`
		Value string `json:"value"`
	} `json:"matchers"`
}

// selectorsOf runs promrules selectors on one rule file.
func selectorsOf(t *testing.T, file string) []rule {
	t.Helper()
	out := process.Run(t, promrules(t), "selectors", file)
	var rs []rule
	if err := json.Unmarshal([]byte(out), &rs); err != nil {
		t.Fatalf("decode promrules output: %v\n%s", err, out)
	}
	return rs
}

// The component ships each generated dashboard as a ConfigMap that the
// Grafana sidecar discovers, byte for byte, and adds nothing else to an
// overlay.
func TestDashboardsComponentShipsEveryDashboard(t *testing.T) {
	objs := renderOverlay(t, "components:\n  - ../../"+dashboardsComponent+"\n")
	base := render(t, defaultInstall)
	files, err := filepath.Glob(filepath.Join(tools.MustRepoRoot(t), dashboardsComponent, "*.json"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no dashboards in %s (%v)", dashboardsComponent, err)
	}
	cms := objects.OfKind(objs, "ConfigMap")
	if len(objs) != len(base)+len(files) || len(cms) != len(files) {
		t.Fatalf("the overlay renders %d objects (%d ConfigMaps), want the %d of %s and one ConfigMap per dashboard (%d)", len(objs), len(cms), len(base), defaultInstall, len(files))
	}
	shipped := map[string]bool{}
	for _, cm := range cms {
		if got := cm.GetLabels()[grafanaDashboardLabel]; got != "1" {
			t.Errorf("%s has %s=%q, want \"1\"", id(cm), grafanaDashboardLabel, got)
		}
		data := cm.Object["data"].(map[string]any)
		for name, content := range data {
			want, err := os.ReadFile(filepath.Join(tools.MustRepoRoot(t), dashboardsComponent, name))
			if err != nil {
				t.Errorf("%s holds %s, which is not a shipped dashboard", id(cm), name)
				continue
			}
			if content.(string) != string(want) {
				t.Errorf("%s holds %s changed", id(cm), name)
			}
			shipped[name] = true
		}
	}
	for _, f := range files {
		if !shipped[filepath.Base(f)] {
			t.Errorf("no ConfigMap ships %s", filepath.Base(f))
		}
	}
}

// The fleet dashboard's panels of the two Deployments name them and their
// containers as deploy/default renders them: a name the installation does
// not use would leave the panels blank in every cluster.
func TestFleetDashboardNamesTheDeployments(t *testing.T) {
	qs, _ := shippedQueries(t)
	objs := render(t, defaultInstall)
	seen := map[string]bool{}
	for _, q := range qs {
		if q.Dashboard != "KIM Snatch / fleet" {
			continue
		}
		for _, s := range querySelectors(t, q) {
			m := map[string]string{}
			for _, x := range s.Matchers {
				m[x.Name] = x.Value
			}
			switch s.Metric {
			case "kube_pod_container_info":
				name, ok := strings.CutSuffix(m["pod"], "-.+")
				if !ok {
					t.Errorf("%s: selects Pods %q, not those of one Deployment", q, m["pod"])
					continue
				}
				if got := container(t, deployment(t, objs, name)).Name; got != m["container"] {
					t.Errorf("%s: selects container %q of %s, whose container is %q", q, m["container"], name, got)
				}
				seen[name] = true
			case "kube_deployment_status_replicas", "kube_deployment_status_replicas_unavailable":
				if name := m["deployment"]; name != "" {
					deployment(t, objs, name)
					seen[name] = true
				}
			}
		}
	}
	for _, name := range []string{"snatch-webhook", "cabundle-syncer"} {
		if !seen[name] {
			t.Errorf("the fleet dashboard has no panel of the Deployment %s", name)
		}
	}
}

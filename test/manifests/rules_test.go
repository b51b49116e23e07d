package manifests

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	dto "github.com/prometheus/client_model/go"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"sigs.k8s.io/yaml"

	"github.com/kyma-project/kim-snatch/test/metricdefs"
	"github.com/kyma-project/kim-snatch/test/tools"
)

// externalSeries are the series of other components that the rules read,
// each with the series whose absence an alert covers: the series itself,
// or, for a counter that exists only after it first counts, a series its
// source always serves. An alert that reads a series of neither this list
// nor this project could not fire where that series is missing, and nothing
// would say so. `up` of the installation's own jobs is checked per job
// (TestEveryScrapedJobHasADownAndAnAbsentAlert).
var externalSeries = map[string]string{
	// kube-state-metrics.
	"kube_deployment_status_replicas_available": "kube_deployment_status_replicas_available",
	"kube_deployment_spec_replicas":             "kube_deployment_spec_replicas",
	"kube_pod_info":                             "kube_pod_info",
	"kube_pod_status_phase":                     "kube_pod_status_phase",
	"kube_pod_labels":                           "kube_pod_labels",
	"kube_pod_nodeselectors":                    "kube_pod_nodeselectors",
	"kube_node_labels":                          "kube_node_labels",
	"kube_namespace_labels":                     "kube_namespace_labels",
	// The same collector as kube_pod_info serves it for every Pod.
	"kube_pod_created": "kube_pod_info",
	// The check Jobs' series exist only while a check Job does (the
	// CronJob is suspended by default): kube_pod_info stands for
	// kube-state-metrics itself.
	"kube_job_created": "kube_pod_info",
	"kube_job_failed":  "kube_pod_info",
	// The webhook's PodDisruptionBudget exists only while the webhook is
	// installed: its absence is what it tells (a webhook not installed
	// here), and kube_pod_info stands for kube-state-metrics itself.
	"kube_poddisruptionbudget_created": "kube_pod_info",
	// The kube-apiserver: each series of its calls to the webhook exists
	// only after the first call, failure, rejection or slow call.
	// apiserverGuard, which only the kube-apiserver serves, stands for it:
	// where it is absent (the Shoot profile), the alerts of group
	// kim-snatch-shoot cover the failures instead
	// (TestNothingFiresForTheMissingAPIServerAlone).
	"apiserver_admission_webhook_fail_open_count":                   apiserverGuard,
	"apiserver_admission_webhook_request_total":                     apiserverGuard,
	"apiserver_admission_webhook_rejection_count":                   apiserverGuard,
	"apiserver_admission_webhook_admission_duration_seconds_bucket": apiserverGuard,
	"apiserver_admission_webhook_admission_duration_seconds_count":  apiserverGuard,
	apiserverGuard: apiserverGuard,
}

// apiserverGuard is the series that says Prometheus scrapes the
// kube-apiserver (docs/operations.md, "Monitoring profiles"): aggregated API
// servers such as metrics-server and prometheus-adapter serve
// apiserver_request_total, but run no admission chain.
const apiserverGuard = "apiserver_admission_controller_admission_duration_seconds_count"

// codeMetrics returns the metric names the binaries register, from their
// packages' own constructors on a fresh registry, with the series names of
// each histogram.
func codeMetrics(t *testing.T) map[string]bool {
	t.Helper()
	names := map[string]bool{}
	for name := range codeMetricLabels(t) {
		names[name] = true
	}
	return names
}

// codeMetricLabels returns, for each series name of codeMetrics, the label
// names the code gives it (le on a histogram's buckets).
func codeMetricLabels(t *testing.T) map[string]map[string]bool {
	t.Helper()
	families, err := metricdefs.Registered()
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]map[string]bool{}
	for _, f := range families {
		labels := map[string]bool{}
		for _, m := range f.GetMetric() {
			for _, l := range m.GetLabel() {
				labels[l.GetName()] = true
			}
		}
		out[f.GetName()] = labels
		if f.GetType() == dto.MetricType_HISTOGRAM {
			for _, suffix := range []string{"_bucket", "_sum", "_count"} {
				withLe := maps.Clone(labels)
				if suffix == "_bucket" {
					withLe["le"] = true
				}
				out[f.GetName()+suffix] = withLe
			}
		}
	}
	return out
}

// promrules returns the rule checker built from hack/tools/promrules (its
// own module, so Prometheus stays out of go.mod).
func promrules(t testing.TB) string {
	t.Helper()
	return tools.Promrules.Path(t)
}

// ruleFile writes the spec of a PrometheusRule, which is a Prometheus rule
// file, and returns its path and the number of rules in it.
func ruleFile(t *testing.T, pr *unstructured.Unstructured) (string, int) {
	t.Helper()
	groups, ok, err := unstructured.NestedSlice(pr.Object, "spec", "groups")
	if err != nil || !ok {
		t.Fatalf("%s has no spec.groups (%v)", id(pr), err)
	}
	n := 0
	for _, g := range groups {
		rules, _, _ := unstructured.NestedSlice(g.(map[string]any), "rules")
		n += len(rules)
	}
	data, err := yaml.Marshal(map[string]any{"groups": groups})
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), pr.GetName()+".rules.yaml")
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
	return path, n
}

func prometheusRules(t *testing.T) []*unstructured.Unstructured {
	t.Helper()
	prs := ofKind(render(t, defaultInstall), "PrometheusRule")
	if len(prs) == 0 {
		t.Fatal("deploy/default renders no PrometheusRule")
	}
	return prs
}

func TestPrometheusRulesPassTheRuleChecker(t *testing.T) {
	tool := promrules(t)
	for _, pr := range prometheusRules(t) {
		t.Run(strings.ReplaceAll(pr.GetName(), "-", "_"), func(t *testing.T) {
			path, n := ruleFile(t, pr)
			if n == 0 {
				t.Fatalf("%s has no rules", id(pr))
			}
			var stdout, stderr bytes.Buffer
			cmd := exec.Command(tool, "check", path)
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			if err := cmd.Run(); err != nil {
				t.Fatalf("promrules check %s: %v\n%s%s", id(pr), err, stdout.String(), stderr.String())
			}
			if want := fmt.Sprintf("SUCCESS: %d rules found", n); !strings.Contains(stdout.String(), want) {
				t.Fatalf("promrules check %s printed %q, want %q", id(pr), stdout.String(), want)
			}
		})
	}
}

// The checker must fail where Prometheus would refuse the rules; otherwise
// the test above proves nothing.
func TestRuleCheckerRejectsBrokenRules(t *testing.T) {
	tool := promrules(t)
	tests := []struct {
		name   string
		rules  string
		wantOK bool
	}{
		{name: "valid_alert", wantOK: true, rules: `
- alert: A
  expr: sum(rate(x_total[5m])) > 0
  for: 2m
  annotations:
    summary: '{{ $value | humanize }}'`},
		{name: "unbalanced_parenthesis", rules: `
- alert: A
  expr: sum(rate(x_total[5m]) > 0`},
		{name: "unknown_function", rules: `
- alert: A
  expr: no_such_function(x_total) > 0`},
		{name: "vector_matching_conflict", rules: `
- alert: A
  expr: x and on (a) ignoring (b) y`},
		{name: "malformed_for", rules: `
- alert: A
  expr: up == 0
  for: 2 minutes`},
		{name: "broken_annotation_template", rules: `
- alert: A
  expr: up == 0
  annotations:
    summary: '{{ $value'`},
		{name: "unknown_rule_field", rules: `
- alert: A
  expr: up == 0
  severity: critical`},
		{name: "duplicate_alert", rules: `
- alert: A
  expr: up == 0
- alert: A
  expr: up == 1`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			indented := strings.ReplaceAll(tt.rules, "\n", "\n      ")
			file := "groups:\n  - name: g\n    rules:" + indented + "\n"
			path := filepath.Join(t.TempDir(), "rules.yaml")
			if err := os.WriteFile(path, []byte(file), 0o600); err != nil {
				t.Fatal(err)
			}
			out, err := exec.Command(tool, "check", path).CombinedOutput()
			var exit *exec.ExitError
			switch {
			case tt.wantOK && err != nil:
				t.Fatalf("promrules check: %v, want success\n%s", err, out)
			case !tt.wantOK && err == nil:
				t.Fatalf("promrules check succeeded, want a failure\n%s", out)
			case !tt.wantOK && (!errors.As(err, &exit) || exit.ExitCode() != 1):
				t.Fatalf("promrules check: %v, want exit code 1\n%s", err, out)
			}
		})
	}
}

// rule is one rule as `promrules selectors` describes it.
type rule struct {
	Group     string `json:"group"`
	Alert     string `json:"alert"`
	Record    string `json:"record"`
	For       string `json:"for"`
	Expr      string `json:"expr"`
	Selectors []struct {
		Metric   string `json:"metric"`
		Matchers []struct {
			Name  string `json:"name"`
			Op    string `json:"op"`
			Value string `json:"value"`
		} `json:"matchers"`
	} `json:"selectors"`
}

// selects reports whether r selects metric with every label in eq matched
// for equality.
func (r rule) selects(metric string, eq map[string]string) bool {
	for _, s := range r.Selectors {
		if s.Metric != metric {
			continue
		}
		n := 0
		for _, m := range s.Matchers {
			if v, ok := eq[m.Name]; ok && m.Op == "=" && m.Value == v {
				n++
			}
		}
		if n == len(eq) {
			return true
		}
	}
	return false
}

// alerts returns every alert of the installation with its selectors.
func alerts(t *testing.T) []rule {
	t.Helper()
	tool := promrules(t)
	var rules []rule
	for _, pr := range prometheusRules(t) {
		path, _ := ruleFile(t, pr)
		var stderr bytes.Buffer
		cmd := exec.Command(tool, "selectors", path)
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("promrules selectors %s: %v\n%s", id(pr), err, stderr.String())
		}
		var rs []rule
		if err := json.Unmarshal(out, &rs); err != nil {
			t.Fatalf("decode promrules output: %v\n%s", err, out)
		}
		rules = append(rules, rs...)
	}
	return rules
}

// alertSeverities returns the severity label of every alert of the
// installation, by alert name.
func alertSeverities(t *testing.T) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, pr := range prometheusRules(t) {
		groups, _, _ := unstructured.NestedSlice(pr.Object, "spec", "groups")
		for _, g := range groups {
			rules, _, _ := unstructured.NestedSlice(g.(map[string]any), "rules")
			for _, r := range rules {
				name, _, _ := unstructured.NestedString(r.(map[string]any), "alert")
				severity, _, _ := unstructured.NestedString(r.(map[string]any), "labels", "severity")
				if name != "" {
					out[name] = severity
				}
			}
		}
	}
	return out
}

// Each item of the operators' health checklist has an alert.
func TestAlertsCoverTheHealthChecklist(t *testing.T) {
	rules := alerts(t)
	severity := alertSeverities(t)
	webhookName := mutatingWebhook(t).Name
	tests := []struct {
		name  string
		match func(rule) bool
	}{
		{name: "webhook_not_ready", match: func(r rule) bool {
			return r.selects("kube_deployment_status_replicas_available", map[string]string{"deployment": "snatch-webhook"})
		}},
		// A deleted Deployment has no replica either: its missing series
		// counts as none available, in the same critical alert.
		{name: "webhook_deployment_deleted", match: func(r rule) bool {
			return r.selects("kube_deployment_status_replicas_available", map[string]string{"deployment": "snatch-webhook"}) &&
				absentOf("kube_deployment_status_replicas_available").MatchString(r.Expr) && strings.Contains(r.Expr, "== 0") &&
				severity[r.Alert] == "critical"
		}},
		{name: "webhook_not_scraped", match: func(r rule) bool {
			return r.selects("up", map[string]string{"job": "snatch-webhook-metrics"}) && strings.Contains(r.Expr, "absent(")
		}},
		{name: "webhook_without_a_certificate", match: func(r rule) bool {
			return r.selects("snatch_webhook_serving_cert_not_after_seconds", map[string]string{"job": "snatch-webhook-metrics"}) && strings.Contains(r.Expr, "== 0")
		}},
		{name: "webhook_cannot_load_the_secret", match: func(r rule) bool {
			return r.selects("snatch_webhook_cert_reloads_total", map[string]string{"result": "error"})
		}},
		{name: "cabundle_out_of_sync_for_more_than_2m", match: func(r rule) bool {
			return r.selects("cabundle_syncer_in_sync", nil) && r.For == "2m" && strings.Contains(r.Expr, "== 0")
		}},
		{name: "ca_expires_in_less_than_7_days", match: func(r rule) bool {
			return r.selects("cabundle_syncer_ca_not_after_seconds", nil) && strings.Contains(r.Expr, "- time() < 7 * 24 * 3600")
		}},
		{name: "serving_certificate_expires_in_less_than_7_days", match: func(r rule) bool {
			return r.selects("snatch_webhook_serving_cert_not_after_seconds", nil) && strings.Contains(r.Expr, "- time() < 7 * 24 * 3600")
		}},
		// Past cert-management's renewal point, 30 days before expiry, by
		// a margin: the renewal did not happen, weeks before expiry.
		{name: "ca_past_its_renewal", match: func(r rule) bool {
			return !r.selects("snatch_webhook_serving_cert_not_after_seconds", nil) && r.selects("cabundle_syncer_ca_not_after_seconds", nil) &&
				strings.Contains(r.Expr, "- time() < 25 * 24 * 3600") && severity[r.Alert] == "warning"
		}},
		{name: "serving_certificate_past_its_renewal", match: func(r rule) bool {
			return r.selects("snatch_webhook_serving_cert_not_after_seconds", nil) &&
				strings.Contains(r.Expr, "- time() < 25 * 24 * 3600") && severity[r.Alert] == "warning"
		}},
		{name: "secret_missing_or_invalid", match: func(r rule) bool {
			return r.selects("cabundle_syncer_source_valid", nil) && strings.Contains(r.Expr, "== 0")
		}},
		{name: "no_syncer_leader", match: func(r rule) bool {
			// The leader gauge, and whether the syncer is scraped at all;
			// besides them only what hands a deleted Deployment over to
			// the webhook's rules: the syncer's Deployment, and whether
			// the webhook is scraped.
			for _, s := range r.Selectors {
				switch {
				case s.Metric == "cabundle_syncer_is_leader":
				case s.Metric == "up" && (r.selects("up", map[string]string{"job": "cabundle-syncer-metrics"}) ||
					r.selects("up", map[string]string{"job": "snatch-webhook-metrics"})):
				case s.Metric == "kube_deployment_spec_replicas" && r.selects(s.Metric, map[string]string{"deployment": "cabundle-syncer"}):
				default:
					return false
				}
			}
			return r.selects("cabundle_syncer_is_leader", nil) && strings.Contains(r.Expr, "< 1") &&
				strings.Contains(r.Expr, `absent(up{job="cabundle-syncer-metrics"})`)
		}},
		{name: "syncer_not_scraped", match: func(r rule) bool {
			return r.selects("up", map[string]string{"job": "cabundle-syncer-metrics"}) && strings.Contains(r.Expr, "absent(up")
		}},
		{name: "calls_from_the_api_server_slow_or_timing_out", match: func(r rule) bool {
			return r.selects("apiserver_admission_webhook_admission_duration_seconds_bucket", map[string]string{"name": webhookName}) &&
				r.selects("apiserver_admission_webhook_request_total", map[string]string{"name": webhookName})
		}},
		{name: "fail_open_count_rising_for_our_webhook", match: func(r rule) bool {
			return r.selects("apiserver_admission_webhook_fail_open_count", map[string]string{"name": webhookName}) && strings.Contains(r.Expr, "increase(")
		}},
		// The Shoot profile: the same failures from series inside the
		// cluster, only where the kube-apiserver is not scraped.
		{name: "shoot_kyma_pods_created_without_calls_to_the_webhook", match: func(r rule) bool {
			return r.selects("kim_snatch:kyma_pods_created:count10m", nil) && r.selects("kim_snatch:webhook_admissions:increase15m", nil) &&
				strings.Contains(r.Expr, "and on () absent("+apiserverGuard+")")
		}},
		{name: "shoot_replica_serving_another_certificate", match: func(r rule) bool {
			return r.selects("snatch_webhook_serving_cert_not_after_seconds", map[string]string{"job": "snatch-webhook-metrics"}) &&
				strings.Contains(r.Expr, "max by (namespace)") && strings.Contains(r.Expr, "min by (namespace)") &&
				strings.Contains(r.Expr, "and on () absent("+apiserverGuard+")")
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if !slices.ContainsFunc(rules, tt.match) {
				t.Fatalf("no alert covers %s", tt.name)
			}
		})
	}
}

// The alerts name things that exist: the metric names the binaries register,
// jobs that a ServiceMonitor scrapes, Deployments of the installation.
func TestAlertsNameWhatIsDeployed(t *testing.T) {
	objs := render(t, defaultInstall)
	jobs := scrapedJobs(t, objs)
	metrics := codeMetrics(t)
	var deployments, pdbs []string
	for _, d := range ofKind(objs, "Deployment") {
		deployments = append(deployments, d.GetName())
	}
	for _, d := range ofKind(objs, "PodDisruptionBudget") {
		pdbs = append(pdbs, d.GetName())
	}
	for _, r := range alerts(t) {
		for _, s := range r.Selectors {
			if ours := strings.HasPrefix(s.Metric, "snatch_webhook_") || strings.HasPrefix(s.Metric, "cabundle_syncer_"); ours && !metrics[s.Metric] {
				t.Errorf("alert %s uses metric %s, which the binaries do not register", r.Alert, s.Metric)
			}
			for _, m := range s.Matchers {
				switch {
				case m.Name == "job" && m.Op == "=" && !slices.Contains(jobs, m.Value):
					t.Errorf("alert %s selects job=%q, but the ServiceMonitors scrape only %v", r.Alert, m.Value, jobs)
				case m.Name == "deployment" && m.Op == "=" && !slices.Contains(deployments, m.Value):
					t.Errorf("alert %s selects deployment=%q, not one of %v", r.Alert, m.Value, deployments)
				case m.Name == "poddisruptionbudget" && m.Op == "=" && !slices.Contains(pdbs, m.Value):
					t.Errorf("alert %s selects poddisruptionbudget=%q, not one of %v", r.Alert, m.Value, pdbs)
				}
			}
		}
	}
	for _, pr := range prometheusRules(t) {
		groups, _, _ := unstructured.NestedSlice(pr.Object, "spec", "groups")
		for _, g := range groups {
			rules, _, _ := unstructured.NestedSlice(g.(map[string]any), "rules")
			for _, r := range rules {
				r := r.(map[string]any)
				name, _, _ := unstructured.NestedString(r, "alert")
				if name == "" {
					continue // a recording rule
				}
				severity, _, _ := unstructured.NestedString(r, "labels", "severity")
				if severity != "critical" && severity != "warning" {
					t.Errorf("alert %s has severity %q, want critical or warning", name, severity)
				}
				for _, a := range []string{"summary", "description"} {
					if v, _, _ := unstructured.NestedString(r, "annotations", a); v == "" {
						t.Errorf("alert %s has no %s annotation", name, a)
					}
				}
			}
		}
	}
}

// scrapedJobs returns the job names Prometheus gives the installation's
// targets: prometheus-operator names a ServiceMonitor's job after each
// Service it selects. Each such Service must have the endpoint's port.
func scrapedJobs(t *testing.T, objs []*unstructured.Unstructured) []string {
	t.Helper()
	var jobs []string
	for _, sm := range ofKind(objs, "ServiceMonitor") {
		sel, _, _ := unstructured.NestedStringMap(sm.Object, "spec", "selector", "matchLabels")
		endpoints, _, _ := unstructured.NestedSlice(sm.Object, "spec", "endpoints")
		n := 0
		for _, svc := range ofKind(objs, "Service") {
			if svc.GetNamespace() != sm.GetNamespace() || !labels.SelectorFromSet(sel).Matches(labels.Set(svc.GetLabels())) {
				continue
			}
			n++
			jobs = append(jobs, svc.GetName())
			ports, _, _ := unstructured.NestedSlice(svc.Object, "spec", "ports")
			for _, ep := range endpoints {
				port, _, _ := unstructured.NestedString(ep.(map[string]any), "port")
				if !slices.ContainsFunc(ports, func(p any) bool { return p.(map[string]any)["name"] == port }) {
					t.Errorf("ServiceMonitor %s scrapes port %q, which Service %s lacks", sm.GetName(), port, svc.GetName())
				}
			}
		}
		if n != 1 {
			t.Errorf("ServiceMonitor %s selects %d Services, want exactly its metrics Service", sm.GetName(), n)
		}
	}
	return jobs
}

// absentOf matches absent( applied to a selector of the named metric, and
// gives the rest of that selector.
func absentOf(metric string) *regexp.Regexp {
	return regexp.MustCompile(`absent\(\s*` + regexp.QuoteMeta(metric) + `(\{[^}]*\})?\s*\)`)
}

// Every series a rule reads is produced by this project (a metric the
// binaries register, or a record of these rules), or is a series of another
// component for which an alert fires when it is absent: otherwise the
// alerts that read it could never fire, silently.
func TestAlertSeriesAreOursOrCoveredByAnAbsentAlert(t *testing.T) {
	rules := alerts(t)
	ours := codeMetrics(t)
	for _, r := range rules {
		if r.Record != "" {
			ours[r.Record] = true
		}
	}
	covered := func(series string) bool {
		return slices.ContainsFunc(rules, func(r rule) bool {
			return r.Alert != "" && absentOf(series).MatchString(r.Expr)
		})
	}
	used := map[string]bool{}
	for _, r := range rules {
		for _, s := range r.Selectors {
			used[s.Metric] = true
			switch {
			case s.Metric == "up", ours[s.Metric]:
			case externalSeries[s.Metric] == "":
				t.Errorf("rule %s%s reads %s, which is neither this project's nor listed with the alert for its absence", r.Alert, r.Record, s.Metric)
			case !covered(externalSeries[s.Metric]):
				t.Errorf("rule %s%s reads %s, but no alert fires on absent(%s)", r.Alert, r.Record, s.Metric, externalSeries[s.Metric])
			}
		}
	}
	for m := range externalSeries {
		if !used[m] {
			t.Errorf("externalSeries lists %s, which no rule reads", m)
		}
	}
}

// Each job the ServiceMonitors produce has an alert for a target that is
// down (up == 0) and one for no target at all (absent(up{job=...})), so a
// scrape that fails, as every scrape of the syncer does without the
// metrics-reader binding, is named as such.
func TestEveryScrapedJobHasADownAndAnAbsentAlert(t *testing.T) {
	rules := alerts(t)
	for _, job := range scrapedJobs(t, render(t, defaultInstall)) {
		t.Run(strings.ReplaceAll(job, "-", "_"), func(t *testing.T) {
			down := regexp.MustCompile(`up\{job="` + regexp.QuoteMeta(job) + `"\}\)\s*== 0`)
			absent := regexp.MustCompile(`absent\(up\{job="` + regexp.QuoteMeta(job) + `"\}\)`)
			if !slices.ContainsFunc(rules, func(r rule) bool { return r.Alert != "" && down.MatchString(r.Expr) }) {
				t.Errorf("no alert fires on up{job=%q} == 0", job)
			}
			if !slices.ContainsFunc(rules, func(r rule) bool { return r.Alert != "" && absent.MatchString(r.Expr) }) {
				t.Errorf("no alert fires on absent(up{job=%q})", job)
			}
		})
	}
}

// guardUse matches each use of absent(apiserverGuard) in an expression with
// the operator that joins it.
var guardUse = regexp.MustCompile(`(\S+\s+on\s*\(\s*\)\s*)?absent\(\s*` + regexp.QuoteMeta(apiserverGuard) + `\s*\)`)

// In the Shoot profile Prometheus does not scrape the kube-apiserver, and
// no alert may fire for that alone: absent(apiserverGuard) only switches
// the stand-ins of group kim-snatch-shoot on (`and on ()`) or the guard
// alert off (`unless on ()`). The rule unit tests (shoot.yaml,
// dependencies.yaml) prove what each then does.
func TestNothingFiresForTheMissingAPIServerAlone(t *testing.T) {
	var standIns, guards int
	for _, r := range alerts(t) {
		if r.Alert == "" {
			continue
		}
		for _, m := range guardUse.FindAllStringSubmatch(r.Expr, -1) {
			switch op := strings.Fields(m[1]); {
			case len(op) > 0 && op[0] == "and" && r.Group == "kim-snatch-shoot":
				standIns++
			case len(op) > 0 && op[0] == "unless" && r.Alert == "KimSnatchAPIServerMetricsAbsent":
				guards++
			default:
				t.Errorf("alert %s (group %s) uses %q: absent(%s) may only switch a stand-in of kim-snatch-shoot on or the guard alert off", r.Alert, r.Group, m[0], apiserverGuard)
			}
		}
		if r.Group == "kim-snatch-shoot" && !strings.Contains(r.Expr, "and on () absent("+apiserverGuard+")") {
			t.Errorf("alert %s of kim-snatch-shoot holds where the kube-apiserver is scraped", r.Alert)
		}
		for _, s := range r.Selectors {
			if s.Metric == "apiserver_request_total" {
				t.Errorf("alert %s reads apiserver_request_total, which aggregated API servers serve too", r.Alert)
			}
		}
	}
	if standIns == 0 || guards != 1 {
		t.Fatalf("%d stand-ins and %d guard alerts switch on absent(%s), want some and 1", standIns, guards, apiserverGuard)
	}
}

package manifests

import (
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	dto "github.com/prometheus/client_model/go"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"github.com/kyma-project/kim-snatch/test/framework/objects"
	"github.com/kyma-project/kim-snatch/test/metricdefs"
	"github.com/kyma-project/kim-snatch/test/process"
	"github.com/kyma-project/kim-snatch/test/tools"
)

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
	prs := objects.OfKind(render(t, defaultInstall), "PrometheusRule")
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
			out := process.Run(t, tool, "check", path)
			if want := fmt.Sprintf("SUCCESS: %d rules found", n); !strings.Contains(out, want) {
				t.Fatalf("promrules check %s printed %q, want %q", id(pr), out, want)
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
		{name: "valid_alert_passes", wantOK: true, rules: `
- alert: A
  expr: sum(rate(x_total[5m])) > 0
  for: 2m
  annotations:
    summary: '{{ $value | humanize }}'`},
		{name: "unbalanced_parenthesis_is_rejected", rules: `
- alert: A
  expr: sum(rate(x_total[5m]) > 0`},
		{name: "unknown_function_is_rejected", rules: `
- alert: A
  expr: no_such_function(x_total) > 0`},
		{name: "vector_matching_conflict_is_rejected", rules: `
- alert: A
  expr: x and on (a) ignoring (b) y`},
		{name: "malformed_for_is_rejected", rules: `
- alert: A
  expr: up == 0
  for: 2 minutes`},
		{name: "broken_annotation_template_is_rejected", rules: `
- alert: A
  expr: up == 0
  annotations:
    summary: '{{ $value'`},
		{name: "unknown_rule_field_is_rejected", rules: `
- alert: A
  expr: up == 0
  severity: critical`},
		{name: "duplicate_alert_is_rejected", rules: `
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
			r, err := process.Command{}.Run(t.Context(), tool, "check", path)
			switch {
			case tt.wantOK && err != nil:
				t.Fatalf("%v\nwant success", err)
			case !tt.wantOK && err == nil:
				t.Fatalf("promrules check succeeded, want a failure\n%s", r)
			case !tt.wantOK && r.Code != 1:
				t.Fatalf("%v\nwant exit code 1", err)
			}
		})
	}
}

// rule is one rule as `promrules selectors` describes it.
type rule struct {
	Group     string     `json:"group"`
	Alert     string     `json:"alert"`
	Record    string     `json:"record"`
	For       string     `json:"for"`
	Expr      string     `json:"expr"`
	Selectors []selector `json:"selectors"`
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
	return ruleSelectors(t, prometheusRules(t))
}

// ruleSelectors returns every rule of the PrometheusRules prs with its
// selectors, as `promrules selectors` reads them.
func ruleSelectors(t *testing.T, prs []*unstructured.Unstructured) []rule {
	t.Helper()
	var rules []rule
	for _, pr := range prs {
		path, _ := ruleFile(t, pr)
		rules = append(rules, selectorsOf(t, path)...)
	}
	return rules
}

// alertSeverities returns the severity label of every alert of the
// installation, by alert name.
func alertSeverities(t *testing.T) map[string]string {
	t.Helper()
	out := map[string]string{}
	eachShippedAlert(t, func(_ *unstructured.Unstructured, name string, rule map[string]any) {
		out[name], _, _ = unstructured.NestedString(rule, "labels", "severity")
	})
	return out
}

// eachShippedAlert calls fn with every alerting rule of the installation's
// PrometheusRules, its PrometheusRule and its name; recording rules are
// left out.
func eachShippedAlert(t *testing.T, fn func(pr *unstructured.Unstructured, name string, rule map[string]any)) {
	t.Helper()
	for _, pr := range prometheusRules(t) {
		eachAlertOf(pr, func(name string, rule map[string]any) { fn(pr, name, rule) })
	}
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
		{name: "webhook_not_ready_has_an_alert", match: func(r rule) bool {
			return r.selects("kube_deployment_status_replicas_available", map[string]string{"deployment": "snatch-webhook"})
		}},
		// A deleted Deployment has no replica either: its missing series
		// counts as none available, in the same critical alert.
		{name: "webhook_deployment_deleted_has_an_alert", match: func(r rule) bool {
			return r.selects("kube_deployment_status_replicas_available", map[string]string{"deployment": "snatch-webhook"}) &&
				absentOf("kube_deployment_status_replicas_available").MatchString(r.Expr) && strings.Contains(r.Expr, "== 0") &&
				severity[r.Alert] == "critical"
		}},
		{name: "webhook_not_scraped_has_an_alert", match: func(r rule) bool {
			return r.selects("up", map[string]string{"job": "snatch-webhook-metrics"}) && absentOf("up").MatchString(r.Expr)
		}},
		{name: "webhook_without_a_certificate_has_an_alert", match: func(r rule) bool {
			return r.selects("snatch_webhook_serving_cert_not_after_seconds", map[string]string{"job": "snatch-webhook-metrics"}) && strings.Contains(r.Expr, "== 0")
		}},
		{name: "webhook_cannot_load_the_secret_has_an_alert", match: func(r rule) bool {
			return r.selects("snatch_webhook_cert_reloads_total", map[string]string{"result": "error"})
		}},
		{name: "cabundle_out_of_sync_for_more_than_2m_has_an_alert", match: func(r rule) bool {
			return r.selects("cabundle_syncer_in_sync", nil) && r.For == "2m" && strings.Contains(r.Expr, "== 0")
		}},
		{name: "ca_expires_in_less_than_7_days_has_an_alert", match: func(r rule) bool {
			return r.selects("cabundle_syncer_ca_not_after_seconds", nil) && strings.Contains(r.Expr, "- time() < 7 * 24 * 3600")
		}},
		{name: "serving_certificate_expires_in_less_than_7_days_has_an_alert", match: func(r rule) bool {
			return r.selects("snatch_webhook_serving_cert_not_after_seconds", nil) && strings.Contains(r.Expr, "- time() < 7 * 24 * 3600")
		}},
		// Past cert-management's renewal point, 30 days before expiry, by
		// a margin: the renewal did not happen, weeks before expiry.
		{name: "ca_past_its_renewal_has_an_alert", match: func(r rule) bool {
			return !r.selects("snatch_webhook_serving_cert_not_after_seconds", nil) && r.selects("cabundle_syncer_ca_not_after_seconds", nil) &&
				strings.Contains(r.Expr, "- time() < 25 * 24 * 3600") && severity[r.Alert] == "warning"
		}},
		{name: "serving_certificate_past_its_renewal_has_an_alert", match: func(r rule) bool {
			return r.selects("snatch_webhook_serving_cert_not_after_seconds", nil) &&
				strings.Contains(r.Expr, "- time() < 25 * 24 * 3600") && severity[r.Alert] == "warning"
		}},
		{name: "secret_missing_or_invalid_has_an_alert", match: func(r rule) bool {
			return r.selects("cabundle_syncer_source_valid", nil) && strings.Contains(r.Expr, "== 0")
		}},
		{name: "no_syncer_leader_has_an_alert", match: func(r rule) bool {
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
				regexp.MustCompile(`unless\s+on\s*\(cluster\)\s+up\{job="cabundle-syncer-metrics"\}`).MatchString(r.Expr)
		}},
		{name: "syncer_not_scraped_has_an_alert", match: func(r rule) bool {
			return r.selects("up", map[string]string{"job": "cabundle-syncer-metrics"}) && absentOf("up").MatchString(r.Expr)
		}},
		{name: "calls_from_the_api_server_slow_or_timing_out_has_an_alert", match: func(r rule) bool {
			return r.selects("apiserver_admission_webhook_admission_duration_seconds_bucket", map[string]string{"name": webhookName}) &&
				r.selects("apiserver_admission_webhook_request_total", map[string]string{"name": webhookName})
		}},
		{name: "fail_open_count_rising_for_our_webhook_has_an_alert", match: func(r rule) bool {
			return r.selects("apiserver_admission_webhook_fail_open_count", map[string]string{"name": webhookName}) && strings.Contains(r.Expr, "increase(")
		}},
		// The Shoot profile: the same failures from series inside the
		// cluster, only where the kube-apiserver is not scraped.
		{name: "shoot_kyma_pods_created_without_calls_to_the_webhook_has_an_alert", match: func(r rule) bool {
			return r.selects("kim_snatch:kyma_pods_created:count10m", nil) && r.selects("kim_snatch:webhook_admissions:increase15m", nil) &&
				strings.Contains(r.Expr, profileGuard("shoot"))
		}},
		{name: "shoot_replica_serving_another_certificate_has_an_alert", match: func(r rule) bool {
			return r.selects("snatch_webhook_serving_cert_not_after_seconds", map[string]string{"job": "snatch-webhook-metrics"}) &&
				strings.Contains(r.Expr, "max by (cluster, namespace)") && strings.Contains(r.Expr, "min by (cluster, namespace)") &&
				strings.Contains(r.Expr, profileGuard("shoot"))
		}},
		// Both profiles, whatever the traffic: a Kyma Pod younger than the
		// last review that reached any replica got no call at all, which
		// no failure counter sees (a broken namespaceSelector, a deleted
		// MWC).
		{name: "kyma_pod_created_after_the_last_review_has_an_alert", match: func(r rule) bool {
			return r.selects("kube_pod_created", nil) && r.selects("snatch_webhook_last_pod_review_timestamp_seconds", nil) &&
				!r.selects(profileRecord, nil) && severity[r.Alert] == "critical"
		}},
		// A rollout that stopped progressing, for each Deployment: the old
		// replicas may still serve, and the next failure finds none.
		{name: "webhook_rollout_stuck_has_an_alert", match: func(r rule) bool {
			return r.selects("kube_deployment_status_condition", map[string]string{"deployment": "snatch-webhook", "condition": "Progressing", "status": "false"})
		}},
		{name: "syncer_rollout_stuck_has_an_alert", match: func(r rule) bool {
			return r.selects("kube_deployment_status_condition", map[string]string{"deployment": "cabundle-syncer", "condition": "Progressing", "status": "false"})
		}},
		{name: "webhook_configuration_deleted_has_an_alert", match: func(r rule) bool {
			return r.selects("cabundle_syncer_webhook_configuration_found", nil) && strings.Contains(r.Expr, "== 0") &&
				r.selects("cabundle_syncer_emergency_disabled", nil) && severity[r.Alert] == "critical"
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if !slices.ContainsFunc(rules, tt.match) {
				t.Fatal("no alert covers the item")
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
	for _, d := range objects.OfKind(objs, "Deployment") {
		deployments = append(deployments, d.GetName())
	}
	for _, d := range objects.OfKind(objs, "PodDisruptionBudget") {
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
	eachShippedAlert(t, func(_ *unstructured.Unstructured, name string, r map[string]any) {
		severity, _, _ := unstructured.NestedString(r, "labels", "severity")
		if severity != "critical" && severity != "warning" {
			t.Errorf("alert %s has severity %q, want critical or warning", name, severity)
		}
		for _, a := range []string{"summary", "description"} {
			if v, _, _ := unstructured.NestedString(r, "annotations", a); v == "" {
				t.Errorf("alert %s has no %s annotation", name, a)
			}
		}
	})
}

package manifests

import (
	"regexp"
	"slices"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
)

// What the rules read from outside KIM Snatch and from its scrapes, and
// the alert that says so when it is missing.

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

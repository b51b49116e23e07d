package manifests

import (
	"regexp"
	"slices"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/kyma-project/kim-snatch/test/framework/objects"
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
	// The Deployment collector serves it for every condition of every
	// Deployment, as it serves kube_deployment_spec_replicas for each.
	"kube_deployment_status_condition": "kube_deployment_spec_replicas",
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
	// apiserverWitness, the count of the calls the webhook's own metrics
	// say it answered, stands for them: where the profile says the
	// kube-apiserver is scraped and it lacks that series for the webhook,
	// KimSnatchAPIServerMetricsAbsent warns; in the Shoot profile the
	// alerts of group kim-snatch-shoot cover the failures instead
	// (TestNothingFiresForTheMissingAPIServerAlone).
	"apiserver_admission_webhook_fail_open_count":                   apiserverWitness,
	"apiserver_admission_webhook_rejection_count":                   apiserverWitness,
	"apiserver_admission_webhook_admission_duration_seconds_bucket": apiserverWitness,
	"apiserver_admission_webhook_admission_duration_seconds_count":  apiserverWitness,
	apiserverWitness: apiserverWitness,
}

// apiserverWitness is the kube-apiserver's series that exists for the
// webhook once the kube-apiserver has called it.
const apiserverWitness = "apiserver_admission_webhook_request_total"

// profileGuard is how an alert holds in one monitoring profile alone: joined
// on the profile the installation sets (docs/operations.md, "Monitoring
// profiles"), never guessed from the series Prometheus has.
func profileGuard(profile string) string {
	return `and on (cluster) kim_snatch:monitoring_profile:info{profile="` + profile + `"}`
}

// scrapedJobs returns the job names Prometheus gives the installation's
// targets: prometheus-operator names a ServiceMonitor's job after each
// Service it selects. Each such Service must have the endpoint's port.
func scrapedJobs(t *testing.T, objs []*unstructured.Unstructured) []string {
	t.Helper()
	var jobs []string
	for _, sm := range objects.OfKind(objs, "ServiceMonitor") {
		sel, _, _ := unstructured.NestedStringMap(sm.Object, "spec", "selector", "matchLabels")
		endpoints, _, _ := unstructured.NestedSlice(sm.Object, "spec", "endpoints")
		n := 0
		for _, svc := range objects.OfKind(objs, "Service") {
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

// absentOf matches the two ways the rules tell that a series is missing:
// absent( of a selector of the metric, and `unless on (cluster)` before a
// selector of it, which keeps each cluster of the left side that lacks the
// series (docs/operations.md, "Monitoring profiles"), where absent( would
// see one cluster only.
func absentOf(metric string) *regexp.Regexp {
	m := regexp.QuoteMeta(metric)
	return regexp.MustCompile(`absent\(\s*` + m + `(\{[^}]*\})?\s*\)|unless\s+on\s*\(cluster\)\s+` + m + `(\{[^}]*\})?`)
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
// down (up == 0) and one for no target at all (see absentOf), so a
// scrape that fails, as every scrape of the syncer does without the
// metrics-reader binding, is named as such.
func TestEveryScrapedJobHasADownAndAnAbsentAlert(t *testing.T) {
	rules := alerts(t)
	for _, job := range scrapedJobs(t, render(t, defaultInstall)) {
		t.Run(strings.ReplaceAll(job, "-", "_"), func(t *testing.T) {
			down := regexp.MustCompile(`up\{job="` + regexp.QuoteMeta(job) + `"\}\)\s*== 0`)
			absent := regexp.MustCompile(`(absent\(|unless\s+on\s*\(cluster\)\s+)up\{job="` + regexp.QuoteMeta(job) + `"\}`)
			if !slices.ContainsFunc(rules, func(r rule) bool { return r.Alert != "" && down.MatchString(r.Expr) }) {
				t.Errorf("no alert fires on up{job=%q} == 0", job)
			}
			if !slices.ContainsFunc(rules, func(r rule) bool { return r.Alert != "" && absent.MatchString(r.Expr) }) {
				t.Errorf("no alert fires on a missing up{job=%q}", job)
			}
		})
	}
}

// In the Shoot profile Prometheus does not scrape the kube-apiserver, and
// no alert may fire for that alone. The profile is the installation's
// record (docs/operations.md, "Monitoring profiles"): it switches the
// stand-ins of group kim-snatch-shoot on in the Shoot profile, and the one
// alert on the kube-apiserver's missing series, KimSnatchAPIServerMetricsAbsent,
// on in the API server scraped profile; no other alert reads it. The rule
// unit tests (shoot.yaml, dependencies.yaml, clusters.yaml) prove what
// each then does.
func TestNothingFiresForTheMissingAPIServerAlone(t *testing.T) {
	var standIns, guards int
	for _, r := range alerts(t) {
		if r.Alert == "" {
			continue
		}
		shoot, apiserver := strings.Contains(r.Expr, profileGuard("shoot")), strings.Contains(r.Expr, profileGuard("apiserver"))
		switch {
		case r.Group == "kim-snatch-shoot" && shoot && !apiserver:
			standIns++
		case r.Group == "kim-snatch-shoot":
			t.Errorf("alert %s of kim-snatch-shoot holds outside the Shoot profile: want %q", r.Alert, profileGuard("shoot"))
		case r.Alert == "KimSnatchAPIServerMetricsAbsent" && apiserver && !shoot:
			guards++
		case r.selects(profileRecord, nil):
			t.Errorf("alert %s (group %s) reads %s: only the stand-ins of kim-snatch-shoot and KimSnatchAPIServerMetricsAbsent may", r.Alert, r.Group, profileRecord)
		}
		for _, s := range r.Selectors {
			if s.Metric == "apiserver_request_total" || s.Metric == "apiserver_admission_controller_admission_duration_seconds_count" {
				t.Errorf("alert %s reads %s: the profile is the installation's record, not a guess from the series", r.Alert, s.Metric)
			}
		}
	}
	if standIns == 0 || guards != 1 {
		t.Fatalf("%d stand-ins in the Shoot profile and %d guard alerts in the API server scraped profile, want some and 1", standIns, guards)
	}
}

// profileRecord is the record of the monitoring profile that the
// installation sets (deploy/webhook/monitoring-profile).
const profileRecord = "kim_snatch:monitoring_profile:info"

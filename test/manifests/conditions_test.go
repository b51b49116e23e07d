package manifests

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/kyma-project/kim-snatch/test/process"
	"github.com/kyma-project/kim-snatch/test/tools"
)

// installRules writes the rendered default installation, all of its
// objects, as one YAML stream: `promrules conditions` must pick the
// PrometheusRules out of it, as the e2e suite hands it.
func installRules(t *testing.T) string {
	t.Helper()
	return writeObjects(t, "install.yaml", render(t, defaultInstall))
}

// Expositions as the two binaries serve them on /metrics when all is well,
// in the names of docs/operations.md. notAfter is 60 days ahead of the
// evaluation time.
func healthyWebhook(at time.Time) string {
	return fmt.Sprintf(`# HELP snatch_webhook_serving_cert_not_after_seconds notAfter of the serving certificate.
# TYPE snatch_webhook_serving_cert_not_after_seconds gauge
snatch_webhook_serving_cert_not_after_seconds %d
# TYPE snatch_webhook_admission_total counter
snatch_webhook_admission_total{reason="patched"} 12
snatch_webhook_admission_total{reason="error"} 0
# TYPE snatch_webhook_cert_reloads_total counter
snatch_webhook_cert_reloads_total{result="success"} 1
snatch_webhook_cert_reloads_total{result="error"} 0
`, at.Add(60*24*time.Hour).Unix())
}

func healthySyncer(at time.Time, leader int) string {
	return fmt.Sprintf(`# TYPE cabundle_syncer_in_sync gauge
cabundle_syncer_in_sync 1
# TYPE cabundle_syncer_source_valid gauge
cabundle_syncer_source_valid 1
# TYPE cabundle_syncer_is_leader gauge
cabundle_syncer_is_leader %d
# TYPE cabundle_syncer_ca_not_after_seconds gauge
cabundle_syncer_ca_not_after_seconds %d
# TYPE cabundle_syncer_errors_total counter
cabundle_syncer_errors_total{reason="apply"} 3
`, leader, at.Add(60*24*time.Hour).Unix())
}

// Expositions of the other components that the rules read, when all is
// well: kube-state-metrics with the label allowlist of docs/operations.md,
// and the kube-apiserver, which has not failed open (its fail-open counter
// does not exist yet), with the series that says it is scraped
// (docs/operations.md, "Monitoring profiles").
const (
	healthyKubeStateMetrics = `# TYPE kube_deployment_status_replicas_available gauge
kube_deployment_status_replicas_available{namespace="kyma-system",deployment="snatch-webhook"} 2
# TYPE kube_deployment_spec_replicas gauge
kube_deployment_spec_replicas{namespace="kyma-system",deployment="snatch-webhook"} 2
kube_deployment_spec_replicas{namespace="kyma-system",deployment="cabundle-syncer"} 2
# TYPE kube_poddisruptionbudget_created gauge
kube_poddisruptionbudget_created{namespace="kyma-system",poddisruptionbudget="snatch-webhook"} 1.7e+09
# TYPE kube_node_labels gauge
kube_node_labels{node="k1",label_worker_gardener_cloud_pool="cpu-worker-0"} 1
kube_node_labels{node="c1",label_worker_gardener_cloud_pool="customer"} 1
# TYPE kube_namespace_labels gauge
kube_namespace_labels{namespace="kyma-system",label_operator_kyma_project_io_managed_by="kyma"} 1
# TYPE kube_pod_info gauge
kube_pod_info{namespace="kyma-system",pod="snatch-webhook-a",node="k1",created_by_kind="ReplicaSet",created_by_name="snatch-webhook-1"} 1
# TYPE kube_pod_status_phase gauge
kube_pod_status_phase{namespace="kyma-system",pod="snatch-webhook-a",phase="Running"} 1
# TYPE kube_pod_labels gauge
kube_pod_labels{namespace="kyma-system",pod="snatch-webhook-a"} 1
# TYPE kube_pod_nodeselectors gauge
kube_pod_nodeselectors{namespace="kyma-system",pod="snatch-webhook-a"} 1
`
	healthyAPIServer = `# TYPE apiserver_request_total counter
apiserver_request_total{code="200",resource="pods",verb="GET"} 1234
# TYPE apiserver_admission_controller_admission_duration_seconds histogram
apiserver_admission_controller_admission_duration_seconds_bucket{name="NamespaceLifecycle",operation="UPDATE",rejected="false",type="validate",le="+Inf"} 5678
apiserver_admission_controller_admission_duration_seconds_sum{name="NamespaceLifecycle",operation="UPDATE",rejected="false",type="validate"} 0.5
apiserver_admission_controller_admission_duration_seconds_count{name="NamespaceLifecycle",operation="UPDATE",rejected="false",type="validate"} 5678
`
)

// conditions is what `promrules conditions` prints: its JSON, whose one
// other declaration is the tool's own (hack/tools/promrules, a module of
// its own).
type conditions struct {
	At         time.Time                      `json:"at"`
	Holding    []string                       `json:"holding"`
	NotHolding []string                       `json:"notHolding"`
	Labels     map[string][]map[string]string `json:"labels"`
}

// runConditions runs `promrules conditions` with args and returns its
// decoded output, or how it ended and the error that carries all it
// printed.
func runConditions(t *testing.T, stdin string, args ...string) (conditions, process.Result, error) {
	t.Helper()
	r, err := process.Command{Stdin: []byte(stdin)}.Run(t.Context(), promrules(t), append([]string{"conditions"}, args...)...)
	if err != nil {
		return conditions{}, r, err
	}
	var c conditions
	if err := json.Unmarshal([]byte(r.Stdout), &c); err != nil {
		t.Fatalf("decode %q: %v", r.Stdout, err)
	}
	return c, r, nil
}

// The e2e suite's oracle: on the live processes' metrics, exactly the
// alert of the broken item holds. Here the metrics are written by hand from
// docs/operations.md's meaning of each gauge, so the expected alert follows
// from the break, not from the rules.
func TestBrokenItemMetricsHoldExactlyItsAlertCondition(t *testing.T) {
	rules := installRules(t)
	at := time.Unix(1_800_000_000, 0).UTC()
	dir := t.TempDir()
	write := func(name, content string) string {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		return path
	}
	webhook := ",job=snatch-webhook-metrics,namespace=kyma-system,pod=snatch-webhook-a"
	syncerA := ",job=cabundle-syncer-metrics,namespace=kyma-system,pod=cabundle-syncer-a"
	syncerB := ",job=cabundle-syncer-metrics,namespace=kyma-system,pod=cabundle-syncer-b"
	healthy := []string{
		"-metrics", write("webhook", healthyWebhook(at)) + webhook,
		"-metrics", write("leader", healthySyncer(at, 1)) + syncerA,
		"-metrics", write("standby", healthySyncer(at, 0)) + syncerB,
	}
	// A standby's stale gauges must not raise an alert.
	standbyStale := strings.Replace(healthySyncer(at, 0), "cabundle_syncer_in_sync 1", "cabundle_syncer_in_sync 0", 1)
	leaderOutOfSync := strings.Replace(healthySyncer(at, 1), "cabundle_syncer_in_sync 1", "cabundle_syncer_in_sync 0", 1)
	noCertificate := strings.Replace(healthyWebhook(at), fmt.Sprint(at.Add(60*24*time.Hour).Unix()), "0", 1)
	moreErrors := strings.Replace(healthySyncer(at, 1), `{reason="apply"} 3`, `{reason="apply"} 9`, 1)

	ksm := "-metrics=" + write("ksm", healthyKubeStateMetrics) + ",job=kube-state-metrics"
	withSyncer, scaledToZero, deleted, notInstalled := webhookDeploymentExpositions(t)
	webhookDeploymentGone := []string{
		"-metrics", write("leader", healthySyncer(at, 1)) + syncerA,
		"-metrics", write("standby", healthySyncer(at, 0)) + syncerB,
	}
	apiserver := "-metrics=" + write("apiserver", healthyAPIServer) + ",job=apiserver"
	tests := []conditionCase{
		{name: "healthy_holds_no_alert", args: healthy, want: []string{}},
		{name: "standby_out_of_sync_holds_no_alert", want: []string{}, args: []string{
			"-metrics", write("webhook", healthyWebhook(at)) + webhook,
			"-metrics", write("leader", healthySyncer(at, 1)) + syncerA,
			"-metrics", write("stale", standbyStale) + syncerB,
		}},
		{name: "leader_out_of_sync_raises_out_of_sync", want: []string{"KimSnatchCABundleOutOfSync"}, args: []string{
			"-metrics", write("webhook", healthyWebhook(at)) + webhook,
			"-metrics", write("outofsync", leaderOutOfSync) + syncerA,
			"-metrics", write("standby", healthySyncer(at, 0)) + syncerB,
		}},
		{name: "webhook_without_certificate_raises_no_certificate", want: []string{"KimSnatchWebhookNoCertificate"}, args: []string{
			"-metrics", write("nocert", noCertificate) + webhook,
			"-metrics", write("leader", healthySyncer(at, 1)) + syncerA,
		}},
		// The replica runs but its scrapes fail: a scrape fault, not an
		// admission fault.
		{name: "webhook_not_scraped_raises_target_down", want: []string{"KimSnatchWebhookTargetDown"}, args: []string{
			"-down", strings.TrimPrefix(webhook, ","),
			"-metrics", write("leader", healthySyncer(at, 1)) + syncerA,
		}},
		{name: "no_leader_raises_syncer_no_leader", want: []string{"KimSnatchCABundleSyncerNoLeader"}, args: []string{
			"-metrics", write("webhook", healthyWebhook(at)) + webhook,
			"-metrics", write("standby", healthySyncer(at, 0)) + syncerB,
		}},
		// A target of the previous scrape that is gone now is gone for the
		// rules too: Prometheus ends its series with staleness markers, so
		// up from 30 s ago does not hide that no target is left. While
		// kube-state-metrics reports available replicas, that is a
		// monitoring gap, not an admission fault.
		{name: "webhook_gone_since_the_previous_scrape_raises_target_absent", want: []string{"KimSnatchWebhookTargetAbsent"}, args: []string{
			"-before", write("webhook", healthyWebhook(at)) + webhook,
			"-before", write("leader", healthySyncer(at, 1)) + syncerA,
			"-metrics", write("leader", healthySyncer(at, 1)) + syncerA,
		}},
		// Every scrape of the syncer is refused (403 without the
		// metrics-reader binding): the scrape fault is named, and no
		// leader fault is claimed that nobody can see.
		{name: "syncer_scrapes_refused_raise_syncer_target_down", want: []string{"KimSnatchCABundleSyncerTargetDown"}, args: []string{
			"-metrics", write("webhook", healthyWebhook(at)) + webhook,
			"-down", strings.TrimPrefix(syncerA, ","),
			"-down", strings.TrimPrefix(syncerB, ","),
		}},
		{name: "kube_state_metrics_not_scraped_raises_its_absence", want: []string{"KimSnatchKubeStateMetricsAbsent"}, args: healthy, without: ksm},
		// No replica and no target: users are hurt, whether the Deployment
		// is scaled to zero or deleted, and the critical alert alone holds.
		{name: "webhook_scaled_to_zero_raises_unavailable", want: []string{"KimSnatchWebhookUnavailable"}, without: ksm,
			args: append([]string{"-metrics=" + write("ksm-zero", scaledToZero) + ",job=kube-state-metrics"}, webhookDeploymentGone...)},
		{name: "webhook_deployment_deleted_raises_unavailable", want: []string{"KimSnatchWebhookUnavailable"}, without: ksm,
			args: append([]string{"-metrics=" + write("ksm-deleted", deleted) + ",job=kube-state-metrics"}, webhookDeploymentGone...)},
		// Nothing of the webhook was ever here: no target is a warning,
		// and nothing pages.
		{name: "webhook_not_installed_raises_target_absent", want: []string{"KimSnatchWebhookTargetAbsent"}, without: ksm,
			args: append([]string{"-metrics=" + write("ksm-none", notInstalled) + ",job=kube-state-metrics"}, webhookDeploymentGone...)},
		// The same exposition with the webhook's Deployment in it, for the
		// three above: nothing holds.
		{name: "healthy_beside_the_syncer_deployment_holds_no_alert", want: []string{}, without: ksm,
			args: append([]string{"-metrics=" + write("ksm-syncer", withSyncer) + ",job=kube-state-metrics"}, healthy...)},
		// The Shoot profile: nothing holds for the missing series alone.
		{name: "kube_apiserver_not_scraped_holds_no_alert", want: []string{}, args: healthy, without: apiserver},
		// rate() needs the previous scrape, which -before supplies.
		{name: "sync_errors_rising_raise_sync_errors", want: []string{"KimSnatchCABundleSyncErrors"}, args: []string{
			"-metrics", write("webhook", healthyWebhook(at)) + webhook,
			"-before", write("leader", healthySyncer(at, 1)) + syncerA,
			"-metrics", write("errors", moreErrors) + syncerA,
		}},
	}
	runConditionCases(t, rules, at, tests, ksm, apiserver)
}

// The exposition may come on stdin, and bad input is an error, not an empty
// answer that would pass for "no alert holds".
func TestConditionsRejectsBadInput(t *testing.T) {
	rules := installRules(t)
	at := time.Now().UTC()
	if got, _, err := runConditions(t, healthySyncer(at, 1), "-metrics", "-,job=cabundle-syncer-metrics,namespace=kyma-system,pod=p", rules); err != nil || len(got.Holding) == 0 {
		// The webhook is not scraped at all here, so its absence holds.
		t.Fatalf("stdin exposition: %v, holding %v", err, got.Holding)
	} else if slices.Contains(got.Holding, "KimSnatchCABundleSyncerNoLeader") {
		t.Errorf("a leader on stdin was not seen: holding %v", got.Holding)
	}
	broken := filepath.Join(t.TempDir(), "broken.yaml")
	if err := os.WriteFile(broken, []byte("groups:\n  - name: g\n    rules:\n      - alert: A\n        expr: sum(\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	notRules := filepath.Join(t.TempDir(), "cm.yaml")
	if err := os.WriteFile(notRules, []byte("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name  string
		stdin string
		args  []string
	}{
		{name: "malformed_exposition_fails", stdin: "cabundle_syncer_in_sync{ 1\n", args: []string{rules}},
		{name: "broken_rule_file_fails", stdin: healthySyncer(at, 1), args: []string{broken}},
		{name: "file_without_rules_fails", stdin: healthySyncer(at, 1), args: []string{notRules}},
		{name: "missing_metrics_file_fails", args: []string{"-metrics", filepath.Join(t.TempDir(), "nope"), rules}},
		{name: "bad_label_fails", args: []string{"-metrics", "-,job", rules}},
		{name: "bad_label_name_fails", args: []string{"-metrics", "-,not-a-name=x", rules}},
		{name: "down_without_labels_fails", args: []string{"-down", "", rules}},
		{name: "stdin_twice_fails", args: []string{"-metrics", "-", "-before", "-", rules}},
		{name: "without_rule_files_fails"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, r, err := runConditions(t, tt.stdin, tt.args...)
			if err == nil || r.Code <= 0 {
				t.Fatalf("promrules conditions: %v, want a non-zero exit", err)
			}
		})
	}
}

// conditionCase is one state of the metrics, and the alerts that hold in
// it.
type conditionCase struct {
	name string
	args []string
	want []string
	// without names a source of dependencies that the case leaves out.
	without string
}

// webhookDeploymentExpositions returns kube-state-metrics' exposition with
// the syncer's Deployment beside the webhook's, as it reports every
// Deployment of the namespace, and with the webhook's Deployment scaled to
// zero, deleted, and never installed.
func webhookDeploymentExpositions(t *testing.T) (withSyncer, scaledToZero, deleted, notInstalled string) {
	t.Helper()
	syncerDeployment := `kube_deployment_status_replicas_available{namespace="kyma-system",deployment="cabundle-syncer"} 2
`
	webhookAvailable := `kube_deployment_status_replicas_available{namespace="kyma-system",deployment="snatch-webhook"} 2
`
	webhookSpec := `kube_deployment_spec_replicas{namespace="kyma-system",deployment="snatch-webhook"} 2
`
	scaledToZero = strings.NewReplacer(webhookAvailable, strings.Replace(webhookAvailable, "} 2", "} 0", 1)+syncerDeployment,
		webhookSpec, strings.Replace(webhookSpec, "} 2", "} 0", 1)).Replace(healthyKubeStateMetrics)
	deleted = strings.NewReplacer(webhookAvailable, syncerDeployment, webhookSpec, "").Replace(healthyKubeStateMetrics)
	// No object of the webhook at all, its PodDisruptionBudget included: the
	// module's bridge-1, whose monitoring.yaml holds the webhook's rules.
	webhookPDB := `kube_poddisruptionbudget_created{namespace="kyma-system",poddisruptionbudget="snatch-webhook"} 1.7e+09
`
	notInstalled = strings.Replace(deleted, webhookPDB, "", 1)
	withSyncer = strings.Replace(healthyKubeStateMetrics, webhookAvailable, webhookAvailable+syncerDeployment, 1)
	if withSyncer == healthyKubeStateMetrics || scaledToZero == withSyncer || deleted == withSyncer || notInstalled == deleted ||
		strings.Contains(deleted, `deployment="snatch-webhook"`) {
		t.Fatal("the kube-state-metrics expositions of the webhook's Deployment did not change as meant")
	}
	return withSyncer, scaledToZero, deleted, notInstalled
}

// runConditionCases evaluates each case against the rendered installation's
// rules and the PrometheusRule files of deploy/, each with the dependencies
// ksm and apiserver but the one it leaves out.
func runConditionCases(t *testing.T, rules string, at time.Time, tests []conditionCase, ksm, apiserver string) {
	t.Helper()
	// The rendered installation, and the PrometheusRule files of deploy/ as
	// they are.
	root := tools.MustRepoRoot(t)
	sources := map[string][]string{
		"rendered": {rules},
		"files": {
			filepath.Join(root, webhookBase, "prometheusrule.yaml"),
			filepath.Join(root, syncerBase, "prometheusrule.yaml"),
		},
	}
	for _, tt := range tests {
		for source, ruleFiles := range sources {
			t.Run(tt.name+"/"+source, func(t *testing.T) {
				args := append([]string{"-at", at.Format(time.RFC3339)}, tt.args...)
				for _, dep := range []string{ksm, apiserver} {
					if dep != tt.without {
						args = append(args, dep)
					}
				}
				got, _, err := runConditions(t, "", append(args, ruleFiles...)...)
				if err != nil {
					t.Fatal(err)
				}
				if !slices.Equal(got.Holding, tt.want) {
					t.Errorf("holding %v, want exactly %v; labels %v", got.Holding, tt.want, got.Labels)
				}
				all := append(slices.Clone(got.Holding), got.NotHolding...)
				for _, r := range alerts(t) {
					if !slices.Contains(all, r.Alert) && r.Alert != "" {
						t.Errorf("alert %s is in neither list", r.Alert)
					}
				}
				if !got.At.Equal(at) {
					t.Errorf("evaluated at %v, want %v", got.At, at)
				}
			})
		}
	}
}

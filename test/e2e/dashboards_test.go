package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/common/model"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kyma-project/kim-snatch/test/e2e/stack"
	"github.com/kyma-project/kim-snatch/test/framework"
	"github.com/kyma-project/kim-snatch/test/framework/poll"
	"github.com/kyma-project/kim-snatch/test/process"
	"github.com/kyma-project/kim-snatch/test/tools"
)

// panelQuery is one query of one panel, as `dashboards queries` lists it.
type panelQuery struct {
	Dashboard string `json:"dashboard"`
	Panel     string `json:"panel"`
	RefID     string `json:"refId"`
	Expr      string `json:"expr"`
}

// panelChange is what a panel shows while a break lasts: the PromQL
// comparison holds, with %s standing for the query refID of the panel, in
// the Prometheus of the API server scraped profile.
type panelChange struct {
	dashboard, panel, refID, holds string
}

const (
	webhookBoard = "KIM Snatch / snatch-webhook"
	syncerBoard  = "KIM Snatch / cabundle-syncer"
)

// breakPanels are the panels that show each break of the check's table.
// The namespace selector break stops the kube-apiserver's calls to the
// webhook while Kyma Pods are created: only its call rate shows it.
var breakPanels = map[string]panelChange{
	"secret_deleted": {syncerBoard, "Secret usable", "A", "(%s) == 0"},
	"ca_crt_garbled": {syncerBoard, "Secret usable", "A", "(%s) == 0"},
	"ca_bundle_wiped_while_the_leader_may_not_patch":                      {syncerBoard, "caBundle in sync", "A", "(%s) == 0"},
	"all_webhook_replicas_stopped":                                        {webhookBoard, "Ready replicas", "A", "(%s) == 0"},
	"both_syncers_stopped":                                                {syncerBoard, "Leader", "A", "(%s) == 0"},
	"syncer_deployment_deleted":                                           {syncerBoard, "Leader", "A", "(%s) == 0"},
	"webhook_deployment_deleted":                                          {webhookBoard, "Fail-open rate", "A", "(%s) > 0"},
	"webhook_configuration_deleted":                                       {webhookBoard, "Fail-open rate", "B", "(%s) == 0"},
	"emergency_disable":                                                   {syncerBoard, "caBundle in sync", "A", "(%s) == 0"},
	"webhook_service_deleted":                                             {webhookBoard, "Fail-open rate", "A", "(%s) > 0"},
	"replica_serving_a_certificate_of_another_ca":                         {webhookBoard, "Failing open", "A", "(%s) > 0"},
	"namespace_selector_broken":                                           {webhookBoard, "Fail-open rate", "B", "(%s) == 0"},
	"worker_pool_with_no_nodes":                                           {webhookBoard, "Nodes in the preferred pool", "A", "(%s) == 0"},
	"kyma_pods_created_while_the_webhooks_were_down":                      {webhookBoard, "Kyma Pods with the term (SLO, 1h)", "A", "(%s) < 1"},
	"tls_key_of_another_certificate":                                      {webhookBoard, "Certificate reloads", "A", `(%s) > 0 unless on (result) label_replace(vector(0), "result", "success", "", "")`},
	"apiserver_admission_series_dropped":                                  {webhookBoard, "Fail-open rate", "B", "absent(%s)"},
	"tls_key_emptied_and_a_replica_restarted":                             {webhookBoard, "Ready replicas", "A", "(%s) < 2"}, // of deploy/default's two
	"ca_not_renewed_20_days_left":                                         {syncerBoard, "CA expires in", "A", "(%s) < 25 * 24 * 3600"},
	"ca_not_renewed_3_days_left":                                          {syncerBoard, "CA expires in", "A", "(%s) < 7 * 24 * 3600"},
	"ca_not_renewed_3_days_left_fixed_by_served_expiry":                   {webhookBoard, "Serving certificate expires in", "A", "(%s) < 7 * 24 * 3600"},
	"webhook_service_deleted_fixed_by_term_fast_burn":                     {webhookBoard, "Kyma Pods with the term (SLO, 1h)", "A", "(%s) < 1"},
	"kube_state_metrics_hung":                                             {webhookBoard, "Ready replicas", "A", "absent(%s)"},
	"check_role_deleted":                                                  {syncerBoard, "Check runs failed", "A", "(%s) > 0"},
	"kube_state_metrics_allowlist_of_its_own":                             {webhookBoard, "Nodes in the preferred pool", "A", "absent(%s)"},
	"ca_bundle_wiped_while_the_leader_may_not_patch_fixed_by_sync_errors": {syncerBoard, "caBundle in sync", "A", "(%s) == 0"},
	"namespace_selector_broken_fixed_by_admitted_without_webhook":         {webhookBoard, "Fail-open rate", "B", "(%s) == 0"},
	"prometheus_not_admitted_to_the_webhook":                              {webhookBoard, "Scraped replicas", "A", "(%s) == 0"},
	"prometheus_not_admitted_to_the_syncer":                               {syncerBoard, "Scraped replicas", "A", "(%s) == 0"},
	"webhook_rollout_stuck":                                               {webhookBoard, "Rollout stuck", "A", "(%s) == 1"},
	"syncer_rollout_stuck":                                                {syncerBoard, "Rollout stuck", "A", "(%s) == 1"},
}

// Every query of every panel of deploy/components/dashboards returns data
// from the HTTP API of the Prometheus k8s on a healthy installation, which
// scrapes the binaries, the kube-apiserver and the kube-state-metrics
// stand-in through their ServiceMonitors and evaluates the shipped rules
// and the fleet rules: none shows "No data". Kyma Pods are created and the
// CA is renewed first, as a cluster's traffic and cert-management would,
// so that rates and latency quantiles have samples.
func TestDashboardsShowDataInPrometheus(t *testing.T) {
	framework.InTier(t, framework.Full, "the dashboards' queries; the smoke's break proves the monitoring path")
	framework.Shares(t)
	prom := monitored(t, stack.ProfileAPIServer)
	servedAfter(t)
	// A renewal, as cert-management does it, so that the syncer
	// reconciles. The overlap keeps the old CA trusted while the kubelet
	// swaps the replicas' files.
	fp, err := sys.Renew(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if err := sys.WaitBundleHas(t.Context(), time.Minute, fp); err != nil {
		t.Fatal(err)
	}
	qs := panelQueries(t)
	var empty []string
	// Each round asks every query under a deadline of its own, not the
	// poll's: a round cut short by the poll's deadline would report every
	// query empty and hide the ones that are. 10 s pass between rounds.
	err = poll.Until(t.Context(), "every dashboard query to show data", func(context.Context) error {
		kymaTraffic(t)
		var round []string
		for _, q := range qs {
			ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
			v, _, _, err := prom.Query(ctx, q.Expr, time.Now())
			cancel()
			if err != nil || !hasData(v) {
				round = append(round, fmt.Sprintf("%q / %q %s: %s (%v)", q.Dashboard, q.Panel, q.RefID, q.Expr, err))
			}
		}
		empty = round
		if len(empty) > 0 {
			return fmt.Errorf("%d of %d dashboard queries show No data in Prometheus", len(empty), len(qs))
		}
		return nil
	}, poll.Timeout(5*time.Minute), poll.Interval(10*time.Second))
	if err != nil {
		t.Errorf("%v:\n%s", err, strings.Join(empty, "\n"))
	}
	logf("dashboards: %d of %d queries show data in Prometheus", len(qs)-len(empty), len(qs))
}

// hasData reports whether a query result would show on a panel.
func hasData(v model.Value) bool {
	switch v := v.(type) {
	case model.Vector:
		return len(v) > 0
	case model.Matrix:
		return len(v) > 0
	case *model.Scalar:
		return v != nil
	}
	return false
}

// showing is change's comparison on the panel's query.
func showing(change panelChange) string {
	return fmt.Sprintf(change.holds, "query "+change.refID)
}

// kymaTraffic creates 20 Pods in a Kyma-managed namespace by dry run, as
// a cluster's traffic would.
func kymaTraffic(t *testing.T) {
	t.Helper()
	ns := namespace(t, "e2e-traffic", true)
	for range 20 {
		if _, err := sys.Clientset().CoreV1().Pods(ns).Create(t.Context(), gatedPod("traffic"), metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}}); err != nil {
			t.Fatal(err)
		}
	}
}

// panelExpr returns change's comparison on the panel's query.
func panelExpr(t *testing.T, change panelChange) string {
	t.Helper()
	for _, q := range panelQueries(t) {
		if q.Dashboard == change.dashboard && q.Panel == change.panel && q.RefID == change.refID {
			return fmt.Sprintf(change.holds, q.Expr)
		}
	}
	t.Fatalf("no query %s of panel %q in dashboard %q", change.refID, change.panel, change.dashboard)
	return ""
}

// panelQueries lists every query of every panel of the shipped
// dashboards, with the variables set for this installation.
func panelQueries(t *testing.T) []panelQuery {
	t.Helper()
	bin := tools.Dashboards.Path(t)
	root, err := tools.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	files, err := filepath.Glob(filepath.Join(root, "deploy/components/dashboards/*.json"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no dashboards in deploy/components/dashboards (%v)", err)
	}
	// $__rate_interval as Grafana sets it for a recent range: four scrape
	// intervals of the ServiceMonitors (2m as shipped).
	rateInterval := (4 * scrapeInterval(t)).String()
	out := process.Run(t, bin, append([]string{"queries", "-namespace", "kyma-system", "-rate-interval", rateInterval}, files...)...)
	var qs []panelQuery
	if err := json.Unmarshal([]byte(out), &qs); err != nil {
		t.Fatalf("%s queries printed %q: %v", bin, out, err)
	}
	return qs
}

package main

import (
	"github.com/grafana/grafana-foundation-sdk/go/cog"
	"github.com/grafana/grafana-foundation-sdk/go/dashboard"
)

// The names the queries share with the installation: the jobs that
// prometheus-operator gives the two ServiceMonitors' Services, the webhook
// entry the kube-apiserver names in its admission metrics, the Kyma pool
// (the webhook's --worker-pool, as in the placement rules) and the
// namespace of the installation. test/manifests holds them to deploy/.
const (
	webhookJob       = "snatch-webhook-metrics"
	syncerJob        = "cabundle-syncer-metrics"
	webhookName      = "pods.kim-snatch.kyma-project.io"
	kymaPool         = "cpu-worker-0"
	poolLabel        = "label_worker_gardener_cloud_pool"
	defaultNamespace = "kyma-system"
	syncerController = "cabundle-syncer"
	// defaultClusterLabel is the label that tells the clusters of a fleet
	// apart, as the external label each cluster's Prometheus sets; Kyma's
	// fleet monitoring names it shoot (-cluster-label).
	defaultClusterLabel = "cluster"
)

// workload is one of the two Deployments, as deploy/ names it and its
// container: the fleet dashboard finds each in every cluster through
// kube-state-metrics.
type workload struct{ deployment, container string }

var workloads = []workload{
	{deployment: "snatch-webhook", container: "webhook"},
	{deployment: "cabundle-syncer", container: "syncer"},
}

// Label matchers of the panels. $cluster is .* for All, which matches
// series without a cluster label too.
const (
	webhookSel   = `job="` + webhookJob + `", cluster=~"$cluster", namespace="$namespace"`
	syncerSel    = `job="` + syncerJob + `", cluster=~"$cluster", namespace="$namespace"`
	apiserverSel = `name="` + webhookName + `", cluster=~"$cluster"`
	kymaPodsSel  = `cluster=~"$cluster", namespace=~"$namespace"`
	leader       = ` and on (cluster, namespace, pod) (cabundle_syncer_is_leader{` + syncerSel + `} == 1)`
	kymaPoolSel  = `cluster=~"$cluster", ` + poolLabel + `="` + kymaPool + `"`
)

// board is one dashboard and the file it is written to.
type board struct {
	file    string
	builder *dashboard.DashboardBuilder
}

func boards(clusterLabel string) []board {
	return []board{
		{file: "snatch-webhook.json", builder: webhookBoard()},
		{file: "cabundle-syncer.json", builder: syncerBoard()},
		{file: "placement.json", builder: placementBoard()},
		{file: "fleet.json", builder: fleetBoard(clusterLabel)},
	}
}

func newBoard(uid, title, description string) *dashboard.DashboardBuilder {
	return dashboard.NewDashboardBuilder(title).
		Uid(uid).
		Description(description).
		Tags([]string{"kim-snatch"}).
		Editable().
		Refresh("1m").
		Time("now-6h", "now").
		Timezone("utc")
}

func withPanels(b *dashboard.DashboardBuilder, rows ...any) *dashboard.DashboardBuilder {
	for _, r := range rows {
		switch r := r.(type) {
		case string:
			b = b.WithRow(dashboard.NewRowBuilder(r))
		case cog.Builder[dashboard.Panel]:
			b = b.WithPanel(r)
		}
	}
	return b
}

// rolloutStuck is the panel that shows a rollout of the Deployment
// deployment stopped, as alert reads it: 1 while the Deployment's
// Progressing condition is False (ProgressDeadlineExceeded), 0 otherwise.
func rolloutStuck(deployment, alert string) cog.Builder[dashboard.Panel] {
	return single("Rollout stuck", "1 while a rollout of the Deployment has stopped: its Progressing condition is False, "+
		"as the Deployment controller sets it once no new Pod became available within progressDeadlineSeconds "+
		"(kube-state-metrics). "+alert+" warns after 5 minutes of it.", "none",
		q(`max(kube_deployment_status_condition{cluster=~"$cluster", namespace="$namespace", deployment="`+deployment+
			`", condition="Progressing", status="false"})`, "stuck"))
}

// scraped is the panel of the replicas Prometheus scrapes of the job that
// sel selects, beside the targets it finds: fewer scraped than found is
// what alert warns of after 10 minutes.
func scraped(sel, alert string) cog.Builder[dashboard.Panel] {
	return single("Scraped replicas", "Replicas whose last scrape succeeded, and the targets Prometheus finds. "+
		"A target it cannot scrape is blind to every alert on its series; "+alert+" warns after 10 minutes of it.", "none",
		q(`sum(up{`+sel+`})`, "scraped"),
		q(`count(up{`+sel+`})`, "targets"))
}

func webhookBoard() *dashboard.DashboardBuilder {
	b := newBoard("kim-snatch-webhook", "KIM Snatch / snatch-webhook",
		"The mutating webhook: its decisions, its latency as it and the kube-apiserver see it, calls that failed open, and its serving certificate.").
		Variables(variables(
			`label_values(up{job="`+webhookJob+`"}, cluster)`,
			"Namespace", `label_values(up{job="`+webhookJob+`", cluster=~"$cluster"}, namespace)`, false))
	return withPanels(b,
		"Health",
		single("Ready replicas", "Available and desired replicas of the Deployment (kube-state-metrics).", "none",
			q(`sum(kube_deployment_status_replicas_available{cluster=~"$cluster", namespace="$namespace", deployment="snatch-webhook"})`, "available"),
			q(`sum(kube_deployment_spec_replicas{cluster=~"$cluster", namespace="$namespace", deployment="snatch-webhook"})`, "desired")),
		rolloutStuck("snatch-webhook", "KimSnatchWebhookRolloutStuck"),
		scraped(webhookSel, "KimSnatchWebhookTargetDown"),
		single("Serving certificate expires in", "Time until the earliest expiry among the certificates the replicas serve.", "s",
			q(`min(snatch_webhook_serving_cert_not_after_seconds{`+webhookSel+`} > 0) - time()`, "expires in")),
		single("Failing open", "Pod admissions per second that the kube-apiserver let through without a successful call to the webhook (kube-apiserver metrics). Kyma Pods admitted so lack the term.", "reqps",
			q(`sum(rate(apiserver_admission_webhook_fail_open_count{`+apiserverSel+`}[$__rate_interval])) or 0 * sum(rate(apiserver_admission_webhook_request_total{`+apiserverSel+`}[$__rate_interval]))`, "fail-open")),
		single("Kyma Pods with the term (SLO, 1h)", "Share of the webhook's Pod creations in the last hour that got the term or needed none: 1 minus the error ratio of the objective (docs/operations.md, \"Service level objectives\").", "percentunit",
			q(`1 - max(kim_snatch:slo_term_errors:ratio_rate1h{cluster=~"$cluster"})`, "with the term")),
		single("Nodes in the preferred pool", "Nodes of the pool the running replicas prefer (their --worker-pool): 0 when no Node carries it, and the term then helps no Pod.", "none",
			q(`min(kim_snatch:webhook_pool_nodes:count{cluster=~"$cluster"})`, "Nodes")),
		single("Calls within 100 ms (SLO, 1h)", "Share of the calls to the webhook in the last hour that the kube-apiserver saw answered within 100 ms: 1 minus the error ratio of the objective.", "percentunit",
			q(`1 - max(kim_snatch:slo_latency_errors:ratio_rate1h{cluster=~"$cluster"})`, "within 100 ms")),
		"Admission",
		graph("Decisions by outcome and reason", "Requests the webhook answered, per second, by outcome and reason.", "reqps",
			q(`sum by (outcome, reason) (rate(snatch_webhook_admission_total{`+webhookSel+`}[$__rate_interval]))`, "{{outcome}} {{reason}}")),
		graph("Fail-open rate", "Pod admissions per second that failed open (kube-apiserver metrics), next to all calls to the webhook.", "reqps",
			q(`sum(rate(apiserver_admission_webhook_fail_open_count{`+apiserverSel+`}[$__rate_interval])) or 0 * sum(rate(apiserver_admission_webhook_request_total{`+apiserverSel+`}[$__rate_interval]))`, "fail-open"),
			q(`sum(rate(apiserver_admission_webhook_request_total{`+apiserverSel+`}[$__rate_interval]))`, "calls")),
		graph("Latency in the webhook", "Time from reading the request headers to writing the response, TLS excluded.", "s",
			q(`histogram_quantile(0.5, sum by (le) (rate(snatch_webhook_admission_duration_seconds_bucket{`+webhookSel+`}[$__rate_interval])))`, "p50"),
			q(`histogram_quantile(0.99, sum by (le) (rate(snatch_webhook_admission_duration_seconds_bucket{`+webhookSel+`}[$__rate_interval])))`, "p99")),
		graph("Latency the kube-apiserver sees", "The admission latency the webhook adds to each Pod creation, network and TLS included (kube-apiserver metrics). The timeout is 2 s.", "s",
			q(`histogram_quantile(0.5, sum by (le) (rate(apiserver_admission_webhook_admission_duration_seconds_bucket{`+apiserverSel+`, type="admit"}[$__rate_interval])))`, "p50"),
			q(`histogram_quantile(0.99, sum by (le) (rate(apiserver_admission_webhook_admission_duration_seconds_bucket{`+apiserverSel+`, type="admit"}[$__rate_interval])))`, "p99")),
		"Certificate",
		graph("Certificate reloads", "Loads that changed the served pair (success) or failed and kept the last good pair (error).", "none",
			q(`sum by (result) (increase(snatch_webhook_cert_reloads_total{`+webhookSel+`}[$__rate_interval]))`, "{{result}}")),
		graph("Serving certificate expiry", "Time until the certificate each replica serves expires. It is renewed 30 days before.", "s",
			q(`max by (pod) (snatch_webhook_serving_cert_not_after_seconds{`+webhookSel+`} > 0) - time()`, "{{pod}}")),
	)
}

func syncerBoard() *dashboard.DashboardBuilder {
	b := newBoard("kim-snatch-cabundle-syncer", "KIM Snatch / cabundle-syncer",
		"The syncer that keeps the webhook configuration's caBundle in sync with the CA in the certificate Secret. Only the leader reconciles.").
		Variables(variables(
			`label_values(up{job="`+syncerJob+`"}, cluster)`,
			"Namespace", `label_values(up{job="`+syncerJob+`", cluster=~"$cluster"}, namespace)`, false))
	return withPanels(b,
		"State",
		single("caBundle in sync", "1 when every webhook's caBundle equals the bundle built from the Secret's CA, as of the leader's last sync.", "none",
			q(`max(cabundle_syncer_in_sync{`+syncerSel+`}`+leader+`)`, "in sync")),
		single("Secret usable", "1 when the leader last read a usable CA from the certificate Secret; 0 when the Secret is missing or its CA is not usable, and the leader keeps the last good caBundle.", "none",
			q(`max(cabundle_syncer_source_valid{`+syncerSel+`}`+leader+`)`, "usable")),
		single("CA expires in", "Time until the newest CA in the Secret expires, as the leader read it.", "s",
			q(`min(cabundle_syncer_ca_not_after_seconds{`+syncerSel+`} > 0`+leader+`) - time()`, "expires in")),
		single("CAs in the caBundle", "2 during the overlap after a rotation, 1 otherwise.", "none",
			q(`max(cabundle_syncer_bundle_certificates{`+syncerSel+`}`+leader+`)`, "CAs")),
		single("Leader", "Replicas that hold the Lease: 1 when healthy, 0 when none does or none is scraped.", "none",
			q(`sum(cabundle_syncer_is_leader{`+syncerSel+`}) or vector(0)`, "leaders")),
		rolloutStuck("cabundle-syncer", "KimSnatchCABundleSyncerRolloutStuck"),
		scraped(syncerSel, "KimSnatchCABundleSyncerTargetDown"),
		single("Check runs failed", "Runs of the in-cluster check (Jobs kim-snatch-check*) that failed, of those kube-state-metrics still reports: "+
			"a FAIL, an INCOMPLETE run or one that could not start. KimSnatchCheckJobFailed warns while the newest run is one of them.", "none",
			q(`sum(kube_job_failed{cluster=~"$cluster", namespace="$namespace", job_name=~"kim-snatch-check.*", condition="true"}) or vector(0)`, "failed")),
		"Syncs",
		graph("Leader by replica", "1 for the replica that holds the Lease.", "none",
			q(`max by (pod) (cabundle_syncer_is_leader{`+syncerSel+`})`, "{{pod}}")),
		graph("Updates and errors", "Writes to the webhook configuration, and failed or refused syncs by reason.", "none",
			q(`sum(increase(cabundle_syncer_updates_total{`+syncerSel+`}[$__rate_interval]))`, "updates"),
			q(`sum by (reason) (increase(cabundle_syncer_errors_total{`+syncerSel+`}[$__rate_interval]))`, "error {{reason}}")),
		graph("Reconcile latency", "Time the leader takes for one sync (controller-runtime's histogram of the controller cabundle-syncer).", "s",
			q(`histogram_quantile(0.5, sum by (le) (rate(controller_runtime_reconcile_time_seconds_bucket{`+syncerSel+`, controller="`+syncerController+`"}[$__rate_interval])))`, "p50"),
			q(`histogram_quantile(0.99, sum by (le) (rate(controller_runtime_reconcile_time_seconds_bucket{`+syncerSel+`, controller="`+syncerController+`"}[$__rate_interval])))`, "p99")),
	)
}

func placementBoard() *dashboard.DashboardBuilder {
	b := newBoard("kim-snatch-placement", "KIM Snatch / placement",
		"The outcome: where Kyma Pods run, and the Kyma pool's Nodes and capacity. Reads the placement records of the webhook's PrometheusRule, which join kube-state-metrics' series.").
		Variables(variables(
			`label_values(kube_node_labels{`+poolLabel+`="`+kymaPool+`"}, cluster)`,
			"Kyma namespace", `label_values(kube_namespace_labels{cluster=~"$cluster", label_operator_kyma_project_io_managed_by="kyma"}, namespace)`, true))
	pods := `kim_snatch:kyma_pod_pool:info{` + kymaPodsSel + `}`
	nodes := `max by (cluster, node) (kube_node_labels{` + kymaPoolSel + `})`
	return withPanels(b,
		"Kyma Pods",
		single("Kyma Pods on the Kyma pool", "Running Kyma Pods on a Node of the pool "+kymaPool+".", "none",
			q(`count(kim_snatch:kyma_pod_pool:info{`+kymaPodsSel+`, `+poolLabel+`="`+kymaPool+`"}) or 0 * count(`+pods+`)`, "on the pool")),
		single("Kyma Pods off the Kyma pool", "Running Kyma Pods on a Node of another pool. They do not move back by themselves.", "none",
			q(`count(kim_snatch:kyma_pod_pool:info{`+kymaPodsSel+`, `+poolLabel+`!="`+kymaPool+`"}) or 0 * count(`+pods+`)`, "off the pool")),
		single("Kyma pool Nodes", "Nodes of the pool "+kymaPool+".", "none",
			q(`sum(kim_snatch:kyma_pool_nodes:count{cluster=~"$cluster"})`, "Nodes")),
		single("Kyma pool CPU requested", "Share of the Kyma pool's allocatable CPU that Pods request.", "percentunit",
			q(`sum(kube_pod_container_resource_requests{cluster=~"$cluster", resource="cpu"} * on (cluster, node) group_left () `+nodes+`) / sum(kube_node_status_allocatable{cluster=~"$cluster", resource="cpu"} * on (cluster, node) group_left () `+nodes+`)`, "requested")),
		graph("Kyma Pods by pool", "Running Kyma Pods by the pool of their Node.", "none",
			q(`count by (`+poolLabel+`) (`+pods+`)`, "{{"+poolLabel+"}}")),
		list("Kyma Pods off the Kyma pool, by namespace", "0 for each Kyma namespace whose Pods all run on the Kyma pool.", "none",
			q(`sum by (namespace) (kim_snatch:kyma_pods_off_pool:count{`+kymaPodsSel+`}) or 0 * count by (namespace) (`+pods+`)`, "{{namespace}}")),
		"Kyma pool capacity",
		graph("Kyma pool CPU", "Allocatable CPU of the Kyma pool's Nodes, and the CPU that Pods on them request.", "none",
			q(`sum(kube_node_status_allocatable{cluster=~"$cluster", resource="cpu"} * on (cluster, node) group_left () `+nodes+`)`, "allocatable"),
			q(`sum(kube_pod_container_resource_requests{cluster=~"$cluster", resource="cpu"} * on (cluster, node) group_left () `+nodes+`)`, "requested")),
		graph("Kyma pool memory", "Allocatable memory of the Kyma pool's Nodes, and the memory that Pods on them request.", "bytes",
			q(`sum(kube_node_status_allocatable{cluster=~"$cluster", resource="memory"} * on (cluster, node) group_left () `+nodes+`)`, "allocatable"),
			q(`sum(kube_pod_container_resource_requests{cluster=~"$cluster", resource="memory"} * on (cluster, node) group_left () `+nodes+`)`, "requested")),
	)
}

// fleetBoard reads the fleet records and, for the two Deployments, the
// series of kube-state-metrics, with the clusters told apart by the label
// l. Its variable keeps the name cluster whatever l is, as every dashboard's.
func fleetBoard(l string) *dashboard.DashboardBuilder {
	b := newBoard("kim-snatch-fleet", "KIM Snatch / fleet",
		"Every cluster at once, from the fleet records (deploy/components/fleet) that each cluster's Prometheus sends with its external label "+l+", and the two Deployments as kube-state-metrics sees them in each cluster.").
		Variables(variables(`label_values(kim_snatch:fleet_webhook_healthy, `+l+`)`, "", "", false))
	c := `{` + l + `=~"$cluster"}`
	rows := []any{
		"Health",
		single("Unhealthy clusters", "Clusters whose webhook is not healthy or whose caBundle is out of sync.", "none",
			q(`count(kim_snatch:fleet_webhook_healthy`+c+` == 0 or kim_snatch:fleet_cabundle_in_sync`+c+` == 0) or 0 * count(kim_snatch:fleet_webhook_healthy`+c+`)`, "unhealthy")),
		single("Clusters", "Clusters that send the fleet records.", "none",
			q(`count(kim_snatch:fleet_webhook_healthy`+c+`)`, "clusters")),
		single("Kyma Pods off the Kyma pool", "Across the fleet.", "none",
			q(`sum(kim_snatch:fleet_kyma_pods_off_pool`+c+`)`, "off the pool")),
		single("Fail-open rate", "Pod admissions per second that failed open, across the fleet.", "reqps",
			q(`sum(kim_snatch:fleet_fail_open:rate5m`+c+`)`, "fail-open")),
		list("Cluster health", "Each cluster, worst first: 1 is healthy, 0 is not.", "none",
			q(`sort(min by (`+l+`) (kim_snatch:fleet_webhook_healthy`+c+`))`, "webhook healthy"),
			q(`sort(min by (`+l+`) (kim_snatch:fleet_cabundle_in_sync`+c+`))`, "caBundle in sync")),
		bars("Worst clusters by fail-open rate", "The ten clusters with the most Pod admissions that failed open, per second.", "reqps",
			q(`topk(10, kim_snatch:fleet_fail_open:rate5m`+c+`)`, "{{"+l+"}}")),
		"Versions",
		bars("snatch-webhook versions", "Clusters per snatch-webhook version.", "none",
			q(`count by (version) (kim_snatch:fleet_webhook_version:info`+c+`)`, "{{version}}")),
		bars("cabundle-syncer versions", "Clusters per cabundle-syncer version.", "none",
			q(`count by (version) (kim_snatch:fleet_syncer_version:info`+c+`)`, "{{version}}")),
		"Service level objectives",
		bars("Worst clusters: Kyma Pods without the term (1h)", "Error ratio of the first objective over the last hour: Pod creations that failed open, were rejected or hit a webhook error.", "percentunit",
			q(`topk(10, kim_snatch:fleet_slo_term_errors:ratio_rate1h`+c+`)`, "{{"+l+"}}")),
		bars("Worst clusters: slow admissions (1h)", "Error ratio of the second objective over the last hour: calls to the webhook slower than 100 ms.", "percentunit",
			q(`topk(10, kim_snatch:fleet_slo_latency_errors:ratio_rate1h`+c+`)`, "{{"+l+"}}")),
	}
	for _, w := range workloads {
		rows = append(rows, deploymentPanels(l, w)...)
	}
	return withPanels(b, rows...)
}

// deploymentPanels are the four views of one Deployment across the fleet
// that lifecycle-manager's dashboard of mandatory modules gave the single
// Deployment of kim-snatch: how many clusters run it, the share of the
// clusters that do, its unavailable replicas, and the images its Pods run.
// They read kube-state-metrics' series of every cluster, where those meet
// with the label l.
func deploymentPanels(l string, w workload) []any {
	sel := l + `=~"$cluster", namespace="` + defaultNamespace + `", deployment="` + w.deployment + `"`
	all := `kube_deployment_status_replicas{` + l + `=~"$cluster"}`
	pods := l + `=~"$cluster", namespace="` + defaultNamespace + `", pod=~"` + w.deployment + `-.+", container="` + w.container + `"`
	return []any{
		"Deployment " + w.deployment,
		single(w.deployment+": Deployments", "Clusters with the Deployment "+defaultNamespace+"/"+w.deployment+" (kube-state-metrics).", "none",
			q(`count(kube_deployment_status_replicas{`+sel+`})`, "Deployments")),
		single(w.deployment+": clusters with it", "Share of the clusters whose kube-state-metrics reports any Deployment that report "+w.deployment+".", "percentunit",
			q(`count(count by (`+l+`) (kube_deployment_status_replicas{`+sel+`})) / count(count by (`+l+`) (`+all+`))`, "with "+w.deployment)),
		list(w.deployment+": unavailable replicas", "Each cluster's unavailable replicas of the Deployment, worst first: 0 is a ready Deployment.", "none",
			q(`sort_desc(max by (`+l+`) (kube_deployment_status_replicas_unavailable{`+sel+`}))`, "unavailable")),
		list(w.deployment+": images per cluster", "The images the Deployment's Pods run in each cluster, with the number of Pods: two images during a rollout.", "none",
			q(`count by (`+l+`, image) (kube_pod_container_info{`+pods+`})`, "{{image}}")),
	}
}

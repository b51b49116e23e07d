package e2e

import (
	"context"
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/kyma-project/kim-snatch/pkg/check"
	"github.com/kyma-project/kim-snatch/test/e2e/stack"
	"github.com/kyma-project/kim-snatch/test/framework"
)

// Each item of the checklist, broken on its own: the check fails exactly
// that item with a remediation, exactly the alerts that watch the item
// fire, and the check passes again once the item is repaired.
//
// One item depends on another by design (pkg/check): an item that needs
// what another item found unusable is SKIPped, pointing at that item,
// instead of failing a second time for the same fault (ca-bundle and
// served-certificate need a usable CA and caBundle, served-certificate
// needs ready endpoints).
//
// Where the suite runs the Prometheus stack (the real node), each break's
// alerts fire in the Prometheus of each monitoring profile and reach
// Alertmanager, no other alert fires, and its dashboard panel shows it
// (alertWatch). The table at the end gives the time from each break to
// each alert's pending, firing and notification.
func TestCheckFailsExactlyTheBrokenItem(t *testing.T) {
	framework.InTier(t, framework.Smoke, "one break reaches Alertmanager in both monitoring profiles; the other breaks are in the full tier")
	framework.Alone(t, "it breaks each item of the check in turn")
	c := newChecker(t)
	targetNamespace(t)
	watch := newAlertWatch(t)
	args := []string{"--kubeconfig", sys.KubeconfigPath(), "--target-namespace", docsTargetNamespace, "-o", "json"}
	skipCABundle := map[string]check.Status{check.IDCABundle: check.StatusSkip}

	tests := []checkBreak{
		{
			name: "secret_deleted", item: check.IDCASecret, message: "not found", others: skipCABundle,
			breakIt: deleteSecret,
			// cabundle_syncer_errors_total counts the one reconcile that
			// refuses the source. With the shipped `for` of 15m that single
			// rise cannot fire KimSnatchCABundleSyncErrors (its rule test
			// "one refused source does not page as sync errors"); the
			// test-only 20s can, when the rise shows within the break.
			alerts: []string{alertSecretInvalid}, shoot: []string{alertSecretInvalid},
			maybe: []string{alertSyncErrors},
			// "Confirmed when the Secret is not found." The pause of
			// cert-management only kept it from writing the Secret again
			// before the alert fired; it ends before the Fix.
			fix: &runbookFix{alert: alertSecretInvalid, when: "the Secret not found", confirmed: shows(`NotFound`),
				before: resumeCertManagement, during: rotationAlerts, renews: true},
		},
		{
			name: "ca_crt_garbled", item: check.IDCASecret, message: "is unparsable", others: skipCABundle,
			breakIt: garbleCA,
			alerts:  []string{alertSecretInvalid}, shoot: []string{alertSecretInvalid},
			maybe: []string{alertSyncErrors},
			// "Confirmed when ... the output is empty or an error (not
			// PEM)": openssl cannot load the CA, and prints no subject.
			fix: &runbookFix{alert: alertSecretInvalid, when: "openssl unable to load the CA, no subject printed",
				confirmed: func(out string) bool {
					return unloadableCertificate.MatchString(out) && !strings.Contains(out, "subject=")
				},
				before: resumeCertManagement, during: rotationAlerts, renews: true},
		},
		{
			// The replicas keep serving their last good pair, so the
			// check passes; only their failed loads show it.
			name: "tls_key_of_another_certificate", item: check.IDCASecret, status: check.StatusPass,
			breakIt: mismatchKey,
			alerts:  []string{alertReloadFailing}, shoot: []string{alertReloadFailing},
			// "Confirmed when the two hashes differ (the key does not
			// belong to the certificate)." The renewal of the Fix needs
			// cert-management.
			fix: &runbookFix{alert: alertReloadFailing, when: "the public keys of tls.crt and tls.key differ", confirmed: twoHashesDiffer,
				before: resumeCertManagement, during: rotationAlerts, renews: true,
				windowed: "it counts the failed loads of the last 10 minutes"},
		},
		{
			// Prometheus drops the kube-apiserver's series of the
			// webhook: the calls go on and the check passes; only the
			// API server scraped profile, which reads those series,
			// notices. The Shoot profile never reads them.
			name: "apiserver_admission_series_dropped", item: check.IDAdmission, status: check.StatusPass,
			breakIt: dropAPIServerAdmissionSeries,
			alerts:  []string{alertAPIServerMetricsAbsent},
			// "Confirmed as a gap in the scrape, not in the calls, when
			// admission PASSes." The Fix's editor removes the entry.
			fix: &runbookFix{alert: alertAPIServerMetricsAbsent, when: "admission PASS", confirmed: shows(`(?m)^admission\s+PASS`),
				placeholders: map[string]string{"<prometheus-namespace>": "monitoring", "<apiserver-servicemonitor>": "kube-apiserver"},
				editor:       undropAdmissionSeries},
		},
		{
			// A replica that starts while the Secret holds no key loads
			// no pair and is not ready; the other fails to reload.
			name: "tls_key_emptied_and_a_replica_restarted", item: check.IDWebhookPods, status: check.StatusWarn, message: "not ready: ",
			breakIt: emptyKeyAndRestartReplica,
			alerts:  []string{alertNoCertificate, alertReloadFailing}, shoot: []string{alertNoCertificate, alertReloadFailing},
			// "Confirmed when ... tls.crt or tls.key is missing or of
			// length 0." The renewal of the Fix needs cert-management.
			fix: &runbookFix{alert: alertNoCertificate, when: "tls.key of length 0", confirmed: shows(`(?m)^tls\.key 0$`),
				before: resumeCertManagement, during: rotationAlerts, renews: true},
		},
		{
			// The Certificate was not renewed, and its CA has 20 days
			// left: past cert-management's renewal point and the margin
			// after it, weeks before anything fails, so the check passes.
			name: "ca_not_renewed_20_days_left", item: check.IDCASecret, status: check.StatusPass,
			breakIt: caNotRenewed(20 * 24 * time.Hour),
			alerts:  []string{alertCARenewalOverdue}, shoot: []string{alertCARenewalOverdue},
			// The replicas load the new pair, each at its own time.
			maybe: rotationAlerts,
			// "Confirmed when notAfter is less than 25 days away." The
			// renewal of the Fix needs cert-management.
			fix: &runbookFix{alert: alertCARenewalOverdue, when: "notAfter less than 25 days away", confirmed: notAfterWithin(25 * 24 * time.Hour),
				before: resumeCertManagement, during: rotationAlerts, renews: true},
		},
		{
			// The Certificate not renewed, its CA with 3 days left: the
			// CA and the certificate the replicas serve, which is the CA,
			// both page, and the check warns.
			name: "ca_not_renewed_3_days_left", item: check.IDCASecret, status: check.StatusWarn, message: "less than --min-ca-validity",
			breakIt: caNotRenewed(3 * 24 * time.Hour),
			alerts:  []string{alertCAExpiresSoon, alertServingExpiresSoon}, shoot: []string{alertCAExpiresSoon, alertServingExpiresSoon},
			maybe: rotationAlerts,
			// "Confirmed when notAfter is less than 7 days away."
			fix: &runbookFix{alert: alertCAExpiresSoon, when: "notAfter less than 7 days away", confirmed: notAfterWithin(7 * 24 * time.Hour),
				before: resumeCertManagement, during: rotationAlerts, renews: true},
			// Once more, repaired by the runbook of the certificate the
			// replicas serve, which renews and restarts them: "Confirmed
			// when served-certificate lists a replica whose notAfter is
			// less than 7 days away."
			again: []variant{{runbook: "served_expiry",
				fix: &runbookFix{alert: alertServingExpiresSoon, when: "served-certificate listing a notAfter 3 days away",
					confirmed: servedNotAfterWithin(7 * 24 * time.Hour), before: resumeCertManagement, during: rotationAlerts, renews: true}}},
		},
		{
			// Prometheus' scrapes of the webhook time out: the webhook
			// serves on and the check passes; only up says it.
			name: "prometheus_not_admitted_to_the_webhook", item: check.IDWebhookPods, status: check.StatusPass,
			breakIt: admitPrometheusOnlyTo(stack.SyncerName, stack.WebhookName),
			alerts:  []string{alertWebhookTargetDown}, shoot: []string{alertWebhookTargetDown},
			// "Confirmed, for a scrape that times out, when the
			// Prometheus Pods lack allowed in the last column."
			fix: &runbookFix{alert: alertWebhookTargetDown, when: "no Prometheus Pod labelled allowed", confirmed: prometheusUnlabelled},
		},
		{
			// The same for the syncer: the leader goes on syncing.
			name: "prometheus_not_admitted_to_the_syncer", item: check.IDSyncerLease, status: check.StatusPass,
			breakIt: admitPrometheusOnlyTo(stack.WebhookName, stack.SyncerName),
			alerts:  []string{alertSyncerTargetDown}, shoot: []string{alertSyncerTargetDown},
			// "Confirmed as a fault between Prometheus and the syncer
			// when its replicas are listed ready=true"; a timeout, with
			// no Prometheus Pod labelled allowed.
			fix: &runbookFix{alert: alertSyncerTargetDown, when: "replicas ready=true, no Prometheus Pod labelled allowed",
				confirmed: func(out string) bool { return strings.Contains(out, " ready=true") && prometheusUnlabelled(out) }},
		},
		{
			// kube-state-metrics hangs: the installation works and the
			// check passes, but every alert that reads its series is
			// blind.
			name: "kube_state_metrics_hung", item: check.IDWebhookPods, status: check.StatusPass,
			breakIt: hangKubeStateMetrics,
			alerts:  []string{alertKSMAbsent}, shoot: []string{alertKSMAbsent},
			// "Confirmed when no Pod is listed, or none is ready." The
			// Pod's namespace is the placeholder.
			fix: &runbookFix{alert: alertKSMAbsent, when: "the kube-state-metrics Pod not ready", confirmed: shows(`\s0/1\s+Running\s`),
				placeholders: map[string]string{"<ksm-namespace>": "monitoring"}},
		},
		{
			// kube-state-metrics exports neither the Nodes' pool label nor
			// the Namespaces' managed-by label: the placement rules and
			// the witness have nothing to join on.
			name: "kube_state_metrics_allowlist_of_its_own", item: check.IDKymaPool, status: check.StatusPass,
			breakIt: allowlistOfItsOwn,
			alerts:  []string{alertKSMLabelsAbsent}, shoot: []string{alertKSMLabelsAbsent},
			// "Confirmed when a Pod's arguments ... lack
			// worker.gardener.cloud/pool in the entry of nodes." The Fix
			// merges KIM Snatch's labels into the allowlist.
			fix: &runbookFix{alert: alertKSMLabelsAbsent, when: "an allowlist without the pool label", confirmed: allowlistLacksPool,
				placeholders: map[string]string{"<ksm-namespace>": "monitoring"}},
		},
		{
			// The check's own Role deleted: run as the cluster's admin
			// the check passes; the in-cluster Job, under the check's
			// identity, cannot read what it checks and fails.
			name: "check_role_deleted", item: check.IDCASecret, status: check.StatusPass,
			breakIt:  deleteCheckRole,
			exercise: failCheckJob,
			alerts:   []string{alertCheckJobFailed}, shoot: []string{alertCheckJobFailed},
			// "Confirmed by a non-zero exit code, with <job-name> the
			// alert's job_name." The Fix's run of the check is the
			// newest then, and completes.
			fix: &runbookFix{alert: alertCheckJobFailed, when: "a non-zero exit code", confirmed: shows(`(?m)^\s*[1-9][0-9]*\s*$`),
				placeholders: map[string]string{"<job-name>": failedCheckJob}},
		},
		{
			name: "ca_bundle_wiped_while_the_leader_may_not_patch", item: check.IDCABundle, message: "caBundle is empty",
			// The API server cannot verify the webhook: the dry run comes
			// back without the term. The leader's lost right to patch the
			// MWC is what syncer-lease proves with a SubjectAccessReview.
			others: map[string]check.Status{check.IDServedCertificate: check.StatusSkip, check.IDAdmission: check.StatusFail,
				check.IDSyncerLease: check.StatusFail},
			breakIt: wipeCABundleWithoutPatch,
			// Far longer than the leader takes to repair a wipe it may
			// write (tens of milliseconds): the caBundle stays empty.
			hold: 2 * time.Second,
			// The caBundle is out of sync, and the leader keeps failing
			// to write it: both watch this fault. The check's admission
			// item fails open against a caBundle the replicas cannot be
			// verified with, which only the kube-apiserver counts.
			alerts: []string{alertOutOfSync, alertSyncErrors, alertFailingOpen},
			shoot:  []string{alertOutOfSync, alertSyncErrors},
			// A Kyma Pod created a minute into the break got no review.
			maybe:    []string{alertMissedByWebhook},
			exercise: waitLeaderRefusedAgain,
			// "Confirmed when the two fingerprints differ, or the
			// second prints none."
			fix: &runbookFix{alert: alertOutOfSync, when: "one fingerprint only, the caBundle's missing",
				confirmed: func(out string) bool { return strings.Count(out, "Fingerprint=") == 1 }},
			// Once more, repaired by the runbook of the leader's errors,
			// which applies its RBAC again and restarts it: "Confirmed
			// ... for apply-failed after RBAC drift by syncer-lease FAIL."
			again: []variant{{runbook: "sync_errors",
				fix: &runbookFix{alert: alertSyncErrors, when: "syncer-lease FAIL", confirmed: shows(`syncer-lease\s+FAIL`),
					windowed: "it counts the syncer's errors of the last 5 minutes"}}},
		},
		{
			// The smoke tier's break: it fires in both profiles and reaches
			// Alertmanager, and it is the failure users feel first.
			name: "all_webhook_replicas_stopped", smoke: true, item: check.IDWebhookPods, message: "no Pods match",
			others: map[string]check.Status{check.IDWebhookEndpoints: check.StatusFail, check.IDServedCertificate: check.StatusSkip, check.IDAdmission: check.StatusFail},
			breakIt: func(t *testing.T) func(context.Context) error {
				if err := sys.StopWebhooks(context.Background()); err != nil {
					t.Fatal(err)
				}
				return sys.StartWebhooks
			},
			// The check's admission item fails open with no replica to
			// call.
			alerts: []string{alertWebhookUnavailable, alertFailingOpen},
			shoot:  []string{alertWebhookUnavailable},
			// The Shoot profile's witness fires too once more Kyma Pods were
			// created in 10 minutes than the webhook answered calls in 15:
			// the replicas scaled back are Kyma Pods admitted without a
			// call, and how near the installation's own Pods left the count
			// depends on the tests before. So does the witness of both
			// profiles when a Kyma Pod is created while no replica runs.
			maybe: []string{alertAdmittedWithoutWebhook, alertMissedByWebhook},
			// "Confirmed when no Pod is listed."
			fix: &runbookFix{alert: alertWebhookUnavailable, when: "no webhook Pod listed", confirmed: shows(`No resources found`)},
		},
		{
			// Silent in the Shoot profile once: a deleted Deployment has
			// no series, and a sum over none is no alert. Absent counts
			// as none available now, and it pages in both profiles.
			name: "webhook_deployment_deleted", item: check.IDWebhookPods, message: "no Pods match",
			others:  map[string]check.Status{check.IDWebhookEndpoints: check.StatusFail, check.IDServedCertificate: check.StatusSkip, check.IDAdmission: check.StatusFail},
			breakIt: deleteDeployment(stack.WebhookName),
			alerts:  []string{alertWebhookUnavailable, alertFailingOpen},
			shoot:   []string{alertWebhookUnavailable},
			maybe:   []string{alertAdmittedWithoutWebhook, alertMissedByWebhook},
			// "Confirmed when no Pod is listed (the Deployment is scaled
			// to zero or deleted)."
			fix: &runbookFix{alert: alertWebhookUnavailable, when: "no webhook Pod listed", confirmed: shows(`No resources found`)},
		},
		{
			name: "both_syncers_stopped", item: check.IDSyncerLease, message: "has no holder",
			breakIt: func(t *testing.T) func(context.Context) error {
				stopper, ok := sys.(syncerStopper)
				if !ok {
					t.Skipf("%T cannot stop every syncer replica", sys)
				}
				if err := stopper.StopSyncers(context.Background()); err != nil {
					t.Fatal(err)
				}
				return sys.RestoreSyncers
			},
			alerts: []string{alertNoLeader}, shoot: []string{alertNoLeader},
			// "Confirmed when ... the holder is not among the syncer Pods":
			// there are none.
			fix: &runbookFix{alert: alertNoLeader, when: "no syncer Pod listed", confirmed: shows(`No resources found`)},
		},
		{
			// The syncer's replicas stop as a scale to zero stops them, and
			// release the Lease; with the Deployment gone too, no syncer
			// target and no Deployment is the webhook's rules' warning, and
			// the syncer's own stays silent while the webhook is scraped.
			name: "syncer_deployment_deleted", item: check.IDSyncerLease, message: "has no holder",
			breakIt: deleteDeployment(stack.SyncerName),
			alerts:  []string{alertSyncerAbsent}, shoot: []string{alertSyncerAbsent},
			// "Confirmed when no Pod is listed."
			fix: &runbookFix{alert: alertSyncerAbsent, when: "no syncer Pod listed", confirmed: shows(`No resources found`)},
		},
		{
			name: "webhook_service_deleted", item: check.IDWebhookEndpoints,
			message: fmt.Sprintf("Service %s/%s does not exist", stack.Namespace, stack.ServiceName),
			others:  map[string]check.Status{check.IDServedCertificate: check.StatusSkip},
			// The API server resolves the Service only when it dials: a
			// connection it keeps alive still reaches a replica, so the dry
			// run fails only once the API server dials again.
			unsettled: []string{check.IDAdmission},
			breakIt:   deleteWebhookService,
			// Only the kube-apiserver counts the calls it cannot make. In
			// the Shoot profile KimSnatchKymaPodsAdmittedWithoutWebhook
			// stands in once more Pods than calls were created over
			// minutes: longer than this break.
			// KimSnatchKymaPodMissedByWebhook needs a Kyma Pod created a
			// minute after the last call that reached a replica, which
			// this break's first burst may or may not be.
			alerts:   []string{alertFailingOpen},
			maybe:    []string{alertMissedByWebhook},
			exercise: failOpenPods,
			fix: &runbookFix{alert: alertFailingOpen, when: "webhook-endpoints FAIL", confirmed: shows(`webhook-endpoints\s+FAIL`),
				windowed: "it counts the fail-opens of the last 10 minutes"},
			// Once more, until the term objective's budget burns fast,
			// repaired by its runbook: "Confirmed, and its cause named, as
			// for KimSnatchWebhookFailingOpen: the item that FAILs."
			again: []variant{{runbook: "term_fast_burn", alerts: []string{alertFailingOpen, alertTermFastBurn},
				fix: &runbookFix{alert: alertTermFastBurn, when: "webhook-endpoints FAIL", confirmed: shows(`webhook-endpoints\s+FAIL`),
					windowed: "its short window counts the calls of the last 5 minutes"}}},
		},
		{
			name: "replica_serving_a_certificate_of_another_ca", item: check.IDServedCertificate,
			message: "(Pod " + foreignReplica + "): serial ",
			// The dry run fails only when the API server dials the foreign
			// replica, which it does for some new connections.
			unsettled: []string{check.IDAdmission},
			breakIt:   addForeignReplica,
			alerts:    []string{alertFailingOpen},
			// The replicas serve certificates that expire at different
			// times.
			shoot: []string{alertDifferentCertificates},
			// When the newest Pod is one that failed open, and no call
			// reached a trusted replica after it.
			maybe: []string{alertMissedByWebhook},
			// The API server dials the foreign replica for some new
			// connections only: Pods are created until one fails open.
			exercise: failOpenPods,
			// "Confirmed when served-certificate lists replicas with
			// different serials or notAfter, and FAILs for one that the
			// caBundle does not verify." The Pod to delete is the one it
			// names. The fail-opens stay in FailingOpen's window.
			fix: &runbookFix{alert: alertDifferentCertificates, when: "served-certificate FAIL naming " + foreignReplica,
				confirmed:    shows(`served-certificate\s+FAIL[^\n]*` + regexp.QuoteMeta(foreignReplica)),
				placeholders: map[string]string{"<pod>": foreignReplica}},
		},
		{
			// Read from the object, the selector is wrong; only the dry run
			// shows that Kyma Pods are no longer sent to the webhook.
			name: "namespace_selector_broken", item: check.IDAdmission,
			message: "came back without the term",
			others:  map[string]check.Status{check.IDWebhookConfiguration: check.StatusFail, check.IDNamespace: check.StatusWarn},
			breakIt: breakNamespaceSelector,
			// Nothing calls the webhook, so nothing fails where the
			// kube-apiserver is scraped; a Kyma Pod created more than a
			// minute after the last review fires
			// KimSnatchKymaPodMissedByWebhook in both profiles. In the
			// Shoot profile KimSnatchKymaPodsAdmittedWithoutWebhook fires
			// too once more Kyma Pods were created in 10 minutes than the
			// webhook answered calls in 15. Kyma Pods are created until
			// each is active.
			alerts: []string{alertMissedByWebhook},
			shoot:  []string{alertAdmittedWithoutWebhook, alertMissedByWebhook},
			exercise: func(t *testing.T) func() {
				admitted := podsUntilAlert(t, watch, stack.ProfileShoot, alertAdmittedWithoutWebhook)
				missed := podsUntilAlert(t, watch, stack.ProfileAPIServer, alertMissedByWebhook)
				return func() { admitted(); missed() }
			},
			fix: &runbookFix{alert: alertMissedByWebhook, when: "webhook-configuration FAIL", confirmed: shows(`webhook-configuration\s+FAIL`)},
			// Once more, repaired by the runbook of the Shoot profile's
			// witness of calls missing, which restarts both binaries:
			// "Confirmed, and its cause named, by the item that FAILs."
			again: []variant{{runbook: "admitted_without_webhook",
				fix: &runbookFix{alert: alertAdmittedWithoutWebhook, when: "admission FAIL", confirmed: shows(`admission\s+FAIL`)}}},
		},
		{
			// Deleted by hand, without the emergency disable's marker: the
			// API server calls nothing and nothing fails, so only the
			// syncer, which finds no MWC, and the witnesses of Pods
			// created without a review can see it.
			name: "webhook_configuration_deleted", item: check.IDWebhookConfiguration, message: "not found",
			others: map[string]check.Status{check.IDCABundle: check.StatusSkip, check.IDNamespace: check.StatusSkip,
				check.IDWebhookEndpoints: check.StatusSkip, check.IDServedCertificate: check.StatusSkip, check.IDAdmission: check.StatusFail},
			breakIt: deleteWebhookConfiguration,
			alerts:  []string{alertConfigurationMissing}, shoot: []string{alertConfigurationMissing},
			// A Kyma Pod created a minute after the last review; the
			// syncer's reconciles that find no MWC.
			maybe: []string{alertMissedByWebhook, alertAdmittedWithoutWebhook, alertSyncErrors, alertOutOfSync},
			// "Confirmed when both answer NotFound": the MWC and the
			// marker of an emergency disable.
			fix: &runbookFix{alert: alertConfigurationMissing, when: "NotFound for the MWC and for the marker",
				confirmed: func(out string) bool { return strings.Count(out, "NotFound") == 2 }, during: mwcRecreatedAlerts},
		},
		{
			// The documented emergency disable: the marker, then the MWC
			// deleted. The check warns instead of failing, and of the
			// alerts only the reminder fires: the witnesses and the
			// missing MWC's alert yield to the marker.
			name: "emergency_disable", item: check.IDWebhookConfiguration, status: check.StatusWarn,
			message: "under the emergency disable",
			others: map[string]check.Status{check.IDCABundle: check.StatusSkip, check.IDNamespace: check.StatusSkip,
				check.IDWebhookEndpoints: check.StatusSkip, check.IDServedCertificate: check.StatusSkip, check.IDAdmission: check.StatusWarn},
			breakIt: disableInAnEmergency,
			alerts:  []string{alertDisableInEffect}, shoot: []string{alertDisableInEffect},
			// "Confirmed when it prints the reason, the author and the
			// time of the disable." The Fix is the restore.
			fix: &runbookFix{alert: alertDisableInEffect, when: "the marker's reason", confirmed: shows(regexp.QuoteMeta(disableReason + " by e2e since ")),
				during: mwcRecreatedAlerts},
		},
		{
			name: "worker_pool_with_no_nodes", item: check.IDKymaPool,
			message: "no Node carries " + framework.PoolLabel + "=" + misnamedPool,
			breakIt: misnamePool,
			alerts:  []string{alertPoolHasNoNodes}, shoot: []string{alertPoolHasNoNodes},
			// "Confirmed when no Node shows the pool that the webhook's
			// --worker-pool names."
			fix: &runbookFix{alert: alertPoolHasNoNodes, when: "--worker-pool=" + misnamedPool + " in the args", confirmed: shows(`--worker-pool=` + misnamedPool)},
		},
		{
			// A release whose new Pods never become available: the old
			// replicas serve on (maxUnavailable 0), so the check passes,
			// naming the new Pod not ready, and only the Deployment's
			// Progressing condition shows the rollout stopped.
			name: "webhook_rollout_stuck", item: check.IDWebhookPods, status: check.StatusPass, message: "not ready: ",
			breakIt: stuckRollout(stack.WebhookName),
			alerts:  []string{alertWebhookRolloutStuck}, shoot: []string{alertWebhookRolloutStuck},
			// On the node, calls have failed open for moments while the
			// new Pod restarts, in the profile that sees them. Each
			// restart changes the webhook Pods that the network policies
			// select, which may be why; the cause is not pinned down. A
			// failed call is the API server's fail-open, never a blocked
			// create.
			// The new Pod is a target that cannot be scraped, as on a
			// runtime, where KimSnatchWebhookTargetDown warns after its 10
			// minutes; here after the suite's 20 s, within the break.
			maybe: []string{alertFailingOpen, alertWebhookTargetDown},
			// "Confirmed when Pods of two pod-template-hash values are
			// listed and the youngest, of the new template, are not ready."
			fix: &runbookFix{alert: alertWebhookRolloutStuck, when: "Pods of two templates, the new one not ready", confirmed: twoTemplatesNewNotReady},
		},
		{
			// The same for the syncer: the leader keeps the Lease.
			name: "syncer_rollout_stuck", item: check.IDSyncerLease, status: check.StatusPass,
			breakIt: stuckRollout(stack.SyncerName),
			alerts:  []string{alertSyncerRolloutStuck}, shoot: []string{alertSyncerRolloutStuck},
			// The same for its new Pod's target.
			maybe: []string{alertSyncerTargetDown},
			fix:   &runbookFix{alert: alertSyncerRolloutStuck, when: "Pods of two templates, the new one not ready", confirmed: twoTemplatesNewNotReady},
		},
		{
			name: "kyma_pods_created_while_the_webhooks_were_down", item: check.IDPlacement, status: check.StatusWarn,
			message: "3 lack the term",
			breakIt: podsWhileWebhooksDown,
			// The API server failed open on the Pods, and those the
			// scheduler put on the customer pool, if any, run off the
			// Kyma pool.
			alerts: []string{alertFailingOpen, alertPodsOffPool},
			shoot:  []string{alertPodsOffPool},
			adjust: offPoolIfAny,
			// Pods created while no replica ran are older than the
			// replicas that come back, which the witness of both
			// profiles does not count; it may catch them before.
			maybe: []string{alertMissedByWebhook},
		},
	}
	for _, tt := range runs(tests) {
		t.Run(tt.subtest(), func(t *testing.T) {
			if tt.smoke {
				framework.InTier(t, framework.Smoke, "one break, in both monitoring profiles, reaching Alertmanager")
			} else {
				framework.InTier(t, framework.Full, "the smoke tier breaks one item")
			}
			tt.prove(t, c, watch, args)
		})
	}
	if watch != nil {
		watch.table()
		watch.fixTable()
	}
}

// unloadableCertificate is what openssl x509 writes for input that is not
// a certificate: "unable to load certificate" (1.1) or "Unable to load
// certificate" (3).
var unloadableCertificate = regexp.MustCompile(`(?i)unable to load certificate`)

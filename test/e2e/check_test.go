package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	authorizationv1 "k8s.io/api/authorization/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/util/retry"

	"github.com/kyma-project/kim-snatch/pkg/certtest"
	"github.com/kyma-project/kim-snatch/pkg/check"
	"github.com/kyma-project/kim-snatch/pkg/syncer"
	"github.com/kyma-project/kim-snatch/test/e2e/stack"
	"github.com/kyma-project/kim-snatch/test/framework"
	"github.com/kyma-project/kim-snatch/test/process"
)

// docsTargetNamespace is the namespace docs/operations.md passes to
// --target-namespace; a Kyma-managed namespace in every Kyma cluster.
const docsTargetNamespace = "istio-system"

// checkIDs are the items of a report in their order; namespace only with
// --target-namespace.
func checkIDs(withNamespace bool) []string {
	ids := []string{
		check.IDWebhookPods, check.IDSyncerLease, check.IDCASecret, check.IDWebhookConfiguration, check.IDCABundle,
		check.IDWebhookEndpoints, check.IDServedCertificate, check.IDAdmission, check.IDKymaPool, check.IDPlacement,
	}
	if withNamespace {
		ids = append(ids, check.IDNamespace)
	}
	return ids
}

// An operator's first command on a healthy installation: every item
// passes, in the table and in JSON, run as docs/operations.md quotes it.
func TestCheckPassesOnAHealthyInstallation(t *testing.T) {
	c := newChecker(t)
	targetNamespace(t)

	// docs/operations.md: bin/cabundle-syncer check --kubeconfig ~/.kube/config
	run := c.run(t, nil, "--kubeconfig", sys.KubeconfigPath())
	logf("check on a healthy installation (%s):\n%s", run.took.Round(time.Millisecond), run.stdout)
	assertTable(t, run, nil)

	fp := secretCAFingerprint(t)

	// docs/operations.md: check -o json, and check --target-namespace istio-system
	run, r := c.report(t, nil, "--kubeconfig", sys.KubeconfigPath(), "--target-namespace", docsTargetNamespace, "-o", "json")
	assertReport(t, run, r, nil)
	messages := map[string]string{
		check.IDWebhookPods: fmt.Sprintf("%d of %d webhook Pods ready in %s", sys.WebhookReplicas(), sys.WebhookReplicas(), stack.Namespace),
		check.IDSyncerLease: "held by " + stack.SyncerName + "-",
		check.IDCASecret:    fmt.Sprintf("Secret %s/%s key ca.crt: CA", stack.Namespace, stack.SecretName),
		check.IDCABundle:    "the 1 entry of " + stack.WebhookConfigName + " trusts the CA sha256 " + fp[:16],
		check.IDNamespace:   "Pods created in " + docsTargetNamespace + " are sent to the webhook (entries: " + stack.WebhookEntryName + ")",
		check.IDWebhookEndpoints: fmt.Sprintf("entry %s → Service %s/%s port 443 path /mutate-pod: %d ready endpoints",
			stack.WebhookEntryName, stack.Namespace, stack.ServiceName, sys.WebhookReplicas()),
		check.IDServedCertificate: fmt.Sprintf("%d endpoints serve certificates that verify for %s.%s.svc against the caBundle",
			sys.WebhookReplicas(), stack.ServiceName, stack.Namespace),
		check.IDPlacement: "all carry the term, and all bound ones run on pool " + framework.KymaPool,
	}
	for _, res := range r.Checks {
		if want, ok := messages[res.ID]; ok && !strings.Contains(res.Message, want) {
			t.Errorf("%s message %q, want it to contain %q", res.ID, res.Message, want)
		}
	}
	if lease := result(r, check.IDSyncerLease); !strings.HasSuffix(lease.Message, " is Running") {
		t.Errorf("syncer-lease message %q, want the leader's Pod named and Running", lease.Message)
	}
	if watch := newAlertWatch(t); watch != nil {
		watch.assertNone(t, "healthy installation")
		watch.table()
	}
}

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
	c := newChecker(t)
	targetNamespace(t)
	watch := newAlertWatch(t)
	args := []string{"--kubeconfig", sys.KubeconfigPath(), "--target-namespace", docsTargetNamespace, "-o", "json"}
	skipCABundle := map[string]check.Status{check.IDCABundle: check.StatusSkip}

	tests := []struct {
		name string
		// item is the item that must fail (or have status, when set),
		// with message in its message.
		item, message string
		status        check.Status
		// others are the items that are not PASS by design, and their
		// status; unsettled items may PASS or FAIL from run to run.
		others    map[string]check.Status
		unsettled []string
		// breakIt breaks the installation and returns what repairs it.
		breakIt func(t *testing.T) (restore func(context.Context) error)
		// hold is how long the fault must last before the check runs
		// once more and reports the same.
		hold time.Duration
		// alerts and shoot are the alerts that fire in the API server
		// scraped and the Shoot profile, and no other. exercise, when set,
		// makes the fault show in the metrics, as traffic would, once the
		// check has seen it; it returns what undoes its side effects.
		// adjust, when set, drops from both what the break did not cause.
		// maybe are alerts that may fire too, in either profile, and are
		// not required.
		alerts, shoot, maybe []string
		exercise             func(t *testing.T) (undo func())
		adjust               func(alerts []string) []string
	}{
		{
			name: "secret_deleted", item: check.IDCASecret, message: "not found", others: skipCABundle,
			breakIt: deleteSecret,
			// cabundle_syncer_errors_total counts the one reconcile that
			// refuses the source. With the shipped `for` of 15m that single
			// rise cannot fire KimSnatchCABundleSyncErrors (its rule test
			// "one refused source does not page as sync errors"); the
			// test-only 40s can, when the rise shows within the break.
			alerts: []string{alertSecretInvalid}, shoot: []string{alertSecretInvalid},
			maybe: []string{alertSyncErrors},
		},
		{
			name: "ca_crt_garbled", item: check.IDCASecret, message: "is unparsable", others: skipCABundle,
			breakIt: garbleCA,
			alerts:  []string{alertSecretInvalid}, shoot: []string{alertSecretInvalid},
			maybe: []string{alertSyncErrors},
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
			alerts:   []string{alertOutOfSync, alertSyncErrors, alertFailingOpen},
			shoot:    []string{alertOutOfSync, alertSyncErrors},
			exercise: waitLeaderRefusedAgain,
		},
		{
			name: "all_webhook_replicas_stopped", item: check.IDWebhookPods, message: "no Pods match",
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
			alerts:   []string{alertFailingOpen},
			exercise: failOpenPods,
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
			// The API server dials the foreign replica for some new
			// connections only: Pods are created until one fails open.
			exercise: failOpenPods,
		},
		{
			// Read from the object, the selector is wrong; only the dry run
			// shows that Kyma Pods are no longer sent to the webhook.
			name: "namespace_selector_broken", item: check.IDAdmission,
			message: "came back without the term",
			others:  map[string]check.Status{check.IDWebhookConfiguration: check.StatusFail, check.IDNamespace: check.StatusWarn},
			breakIt: breakNamespaceSelector,
			// Nothing calls the webhook, so nothing fails where the
			// kube-apiserver is scraped; only the dashboard's call rate
			// shows it. In the Shoot profile
			// KimSnatchKymaPodsAdmittedWithoutWebhook fires once more Kyma
			// Pods were created in 10 minutes than the webhook answered
			// calls in 15: Kyma Pods are created until it does.
			shoot: []string{alertAdmittedWithoutWebhook},
			exercise: func(t *testing.T) func() {
				return podsUntilAlert(t, watch, stack.ProfileShoot, alertAdmittedWithoutWebhook)
			},
		},
		{
			name: "worker_pool_with_no_nodes", item: check.IDKymaPool,
			message: "no Node carries " + framework.PoolLabel + "=" + misnamedPool,
			breakIt: misnamePool,
			alerts:  []string{alertPoolHasNoNodes}, shoot: []string{alertPoolHasNoNodes},
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
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx := context.Background()
			status := tt.status
			if status == "" {
				status = check.StatusFail
			}
			want := map[string]check.Status{tt.item: status}
			for id, st := range tt.others {
				want[id] = st
			}
			alerts := map[string][]string{stack.ProfileAPIServer: tt.alerts, stack.ProfileShoot: tt.shoot}
			if watch != nil {
				watch.quiet(t, alerts)
			}
			broken := time.Now()
			restore := onceCleanup(t, tt.breakIt(t))

			// Pods of stopped replicas go away and the Lease is released
			// a moment after the processes end, and restarted replicas
			// take a moment to show again: wait for the report to settle
			// on exactly the expected statuses, then hold it to the rest
			// of the expectation.
			run, r, ok := c.waitReport(t, nil, time.Minute, args, func(r check.Report) bool {
				return strings.Contains(result(r, tt.item).Message, tt.message) && statusesAre(r, settle(want, r, tt.unsettled))
			})
			if !ok {
				t.Fatalf("the report did not settle on %s %s with %q and %v within 1m; last run: %s", tt.item, status, tt.message, tt.others, run)
			}
			detected := time.Since(broken)
			assertReport(t, run, r, settle(want, r, tt.unsettled))

			table := c.run(t, nil, "--kubeconfig", sys.KubeconfigPath())
			logf("check, %s (%s reported %s after the break was in place, run took %s):\n%s",
				tt.name, status, detected.Round(time.Millisecond), table.took.Round(time.Millisecond), table.stdout)
			if len(tt.unsettled) == 0 {
				assertTable(t, table, want)
			}
			time.Sleep(tt.hold)
			run, r = c.report(t, nil, args...)
			assertReport(t, run, r, settle(want, r, tt.unsettled))

			if watch != nil {
				undo := func() {}
				if tt.exercise != nil {
					undo = tt.exercise(t)
				}
				if tt.adjust != nil {
					for profile := range alerts {
						alerts[profile] = tt.adjust(alerts[profile])
					}
				}
				change, ok := breakPanels[tt.name]
				if !ok {
					t.Fatalf("no panel in breakPanels shows the break %s", tt.name)
				}
				watch.await(t, tt.name, broken, alerts, tt.maybe, change)
				undo()
			}

			start := time.Now()
			if err := restore(ctx); err != nil {
				t.Fatalf("restore: %v", err)
			}
			run, r, ok = c.waitReport(t, nil, 2*time.Minute, args, func(r check.Report) bool { return r.Status == check.StatusPass })
			if !ok {
				t.Fatalf("the check does not pass within 2m of the repair; last run: %s", run)
			}
			assertReport(t, run, r, nil)
			logf("check, %s: PASS again %s after the repair started", tt.name, time.Since(start).Round(time.Millisecond))
		})
	}
	if watch != nil {
		watch.table()
	}
}

// settle returns want with each unsettled item's status taken from r,
// where it is PASS or FAIL.
func settle(want map[string]check.Status, r check.Report, unsettled []string) map[string]check.Status {
	out := maps.Clone(want)
	for _, id := range unsettled {
		if st := result(r, id).Status; st == check.StatusPass || st == check.StatusFail {
			out[id] = st
		}
	}
	return out
}

// docs/operations.md and docs/troubleshooting.md run the check inside a
// syncer Pod, where it has the syncer's ServiceAccount, and say that the
// webhook Pods are skipped there, as the account may not read them. This
// runs the same command with the same credentials, a token of
// ServiceAccount cabundle-syncer under deploy/syncer's RBAC: the Secret,
// the MutatingWebhookConfiguration and the Lease are readable, the Pods
// are not.
func TestCheckWithTheSyncersServiceAccountSkipsThePods(t *testing.T) {
	c := newChecker(t)
	ctx := context.Background()
	kubeconfig := filepath.Join(t.TempDir(), "cabundle-syncer.kubeconfig")
	if err := stack.WriteServiceAccountKubeconfig(ctx, sys.Clientset(), sys.KubeconfigPath(),
		stack.Namespace, stack.SyncerServiceAccount, 10*time.Minute, kubeconfig); err != nil {
		t.Fatal(err)
	}
	// In the Pod the client finds its credentials itself; here they come
	// from $KUBECONFIG, the next place it looks.
	env := []string{"KUBECONFIG=" + kubeconfig}
	// It may not read Pods, Nodes or Services: webhook-pods, kyma-pool,
	// placement and webhook-endpoints are skipped, served-certificate has
	// no endpoint to dial, and syncer-lease, which reads the Lease but not
	// its holder's Pod, is skipped too (one rule for access denied). A run
	// that did not see every item is INCOMPLETE (exit 4), never a PASS,
	// even on a healthy installation.
	want := map[string]check.Status{
		check.IDWebhookPods: check.StatusSkip, check.IDKymaPool: check.StatusSkip, check.IDPlacement: check.StatusSkip,
		check.IDWebhookEndpoints: check.StatusSkip, check.IDServedCertificate: check.StatusSkip, check.IDSyncerLease: check.StatusSkip,
		// Nor create the admission item's dry-run Pod.
		check.IDAdmission: check.StatusSkip,
	}

	// docs/troubleshooting.md: kubectl -n kyma-system exec deploy/cabundle-syncer -- /cabundle-syncer check
	table := c.run(t, env)
	logf("check with the syncer's ServiceAccount (%s):\n%s", table.took.Round(time.Millisecond), table.stdout)
	assertTable(t, table, want)

	// docs/operations.md: ... -- /cabundle-syncer check -o json
	run, r := c.report(t, env, "-o", "json")
	assertReport(t, run, r, want)
	if run.code != check.ExitIncomplete || r.Status != check.StatusIncomplete {
		t.Errorf("status %s, exit code %d with the syncer's ServiceAccount, want %s, %d", r.Status, run.code, check.StatusIncomplete, check.ExitIncomplete)
	}
	pods := result(r, check.IDWebhookPods)
	if !strings.Contains(pods.Message, "forbidden") || !strings.Contains(pods.Message, "system:serviceaccount:"+stack.Namespace+":"+stack.SyncerServiceAccount) {
		t.Errorf("%s message %q, want the ServiceAccount's forbidden list", check.IDWebhookPods, pods.Message)
	}
	if !strings.Contains(pods.Remediation, "Run check with a kubeconfig that may list Pods") {
		t.Errorf("%s remediation %q, want how to include the item", check.IDWebhookPods, pods.Remediation)
	}
	if lease := result(r, check.IDSyncerLease); !strings.Contains(lease.Message, "was not looked at: these credentials may not get Pods") {
		t.Errorf("%s message %q, want it to say that the holder's Pod was not looked at", check.IDSyncerLease, lease.Message)
	}
}

// syncerStopper stops every syncer replica; the local stack can.
type syncerStopper interface {
	StopSyncers(ctx context.Context) error
}

// deleteSecret deletes the certificate Secret while Gardener
// cert-management is down, which would otherwise issue a new one at once;
// restoring creates it again with the same data, as a re-applied backup
// would, and starts cert-management again.
func deleteSecret(t *testing.T) func(context.Context) error {
	ctx := context.Background()
	resume := pauseCertManagement(t)
	secrets := sys.Clientset().CoreV1().Secrets(stack.Namespace)
	saved, err := secrets.Get(ctx, stack.SecretName, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if err := secrets.Delete(ctx, stack.SecretName, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	return func(ctx context.Context) error {
		_, err := secrets.Create(ctx, &corev1.Secret{
			ObjectMeta: metav1.ObjectMeta{Namespace: saved.Namespace, Name: saved.Name, Labels: saved.Labels, Annotations: saved.Annotations},
			Type:       saved.Type,
			Data:       saved.Data,
		}, metav1.CreateOptions{})
		return errors.Join(err, resume(ctx))
	}
}

// garbleCA cuts the DER of the CA in ca.crt in half, while Gardener
// cert-management is down: still PEM, no longer a certificate. tls.crt and
// tls.key stay as they are.
func garbleCA(t *testing.T) func(context.Context) error {
	ctx := context.Background()
	resume := pauseCertManagement(t)
	sec, err := sys.Clientset().CoreV1().Secrets(stack.Namespace).Get(ctx, stack.SecretName, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	good := sec.Data[certtest.CAFile]
	block, _ := pem.Decode(good)
	if block == nil {
		t.Fatalf("ca.crt of Secret %s/%s is not PEM", stack.Namespace, stack.SecretName)
	}
	block.Bytes = block.Bytes[:len(block.Bytes)/2]
	if err := setCA(ctx, sys.Clientset(), pem.EncodeToMemory(block)); err != nil {
		t.Fatal(err)
	}
	return func(ctx context.Context) error { return errors.Join(setCA(ctx, sys.Clientset(), good), resume(ctx)) }
}

// secretCAFingerprint is the fingerprint of the first CA in the Secret.
func secretCAFingerprint(t *testing.T) string {
	t.Helper()
	fp := stack.CurrentFingerprint(context.Background(), sys.Clientset())
	if fp == "" {
		t.Fatalf("no CA in Secret %s/%s", stack.Namespace, stack.SecretName)
	}
	return fp
}

// setCA writes ca into the Secret's ca.crt.
func setCA(ctx context.Context, cs kubernetes.Interface, ca []byte) error {
	secrets := cs.CoreV1().Secrets(stack.Namespace)
	return retry.RetryOnConflict(retry.DefaultRetry, func() error {
		sec, err := secrets.Get(ctx, stack.SecretName, metav1.GetOptions{})
		if err != nil {
			return err
		}
		sec.Data[certtest.CAFile] = ca
		_, err = secrets.Update(ctx, sec, metav1.UpdateOptions{})
		return err
	})
}

// wipeCABundleWithoutPatch leaves the caBundle empty the one way it stays
// empty while a syncer leads: the leader keeps its Lease but may no longer
// write the MutatingWebhookConfiguration, as after RBAC drift. First it
// shows why nothing simpler works: with the shipped RBAC the leader puts a
// wiped caBundle back before any check could see it. Restoring gives the
// ClusterRole its rules back; the leader then repairs the caBundle itself.
func wipeCABundleWithoutPatch(t *testing.T) func(context.Context) error {
	ctx := context.Background()
	cs := sys.Clientset()
	fp := secretCAFingerprint(t)

	wiped := time.Now()
	if err := wipeCABundle(ctx, cs); err != nil {
		t.Fatal(err)
	}
	if err := sys.WaitBundleHas(ctx, 30*time.Second, fp); err != nil {
		t.Fatalf("with the shipped RBAC the leader does not repair a wiped caBundle: %v", err)
	}
	logf("caBundle wiped with the shipped RBAC: the leader repaired it %s later", time.Since(wiped).Round(time.Millisecond))

	roles := cs.RbacV1().ClusterRoles()
	role, err := roles.Get(ctx, stack.SyncerServiceAccount, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	shipped := role.DeepCopy().Rules
	removed := 0
	for i, rule := range role.Rules {
		if slices.Contains(rule.Resources, "mutatingwebhookconfigurations") {
			n := len(rule.Verbs)
			role.Rules[i].Verbs = slices.DeleteFunc(slices.Clone(rule.Verbs), func(v string) bool { return v == "patch" })
			removed += n - len(role.Rules[i].Verbs)
		}
	}
	if removed != 1 {
		t.Fatalf("ClusterRole %s grants patch on mutatingwebhookconfigurations %d times, want once: %v", role.Name, removed, shipped)
	}
	if _, err := roles.Update(ctx, role, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	restore := func(ctx context.Context) error {
		return retry.RetryOnConflict(retry.DefaultRetry, func() error {
			role, err := roles.Get(ctx, stack.SyncerServiceAccount, metav1.GetOptions{})
			if err != nil {
				return err
			}
			role.Rules = shipped
			_, err = roles.Update(ctx, role, metav1.UpdateOptions{})
			return err
		})
	}
	// The authorizer learns of the change through a watch; wipe only once
	// it refuses, or the leader may still repair the wipe.
	if err := waitSyncerMayPatch(ctx, cs, false); err != nil {
		_ = restore(ctx)
		t.Fatal(err)
	}

	var leader *replica
	refusedBefore := 0.0
	if lf, ok := sys.(leaderFinder); ok {
		l, err := lf.Leader(ctx)
		leader = &l
		if err != nil {
			_ = restore(ctx)
			t.Fatal(err)
		}
		refusedBefore = applyFailures(*leader)
	}
	if err := wipeCABundle(ctx, cs); err != nil {
		_ = restore(ctx)
		t.Fatal(err)
	}
	if leader != nil {
		// The leader saw the wipe and was refused the write: the caBundle
		// stays empty because of the RBAC, not because nobody looked.
		err := wait.PollUntilContextTimeout(ctx, 50*time.Millisecond, 30*time.Second, true, func(context.Context) (bool, error) {
			return applyFailures(*leader) > refusedBefore, nil
		})
		if err != nil {
			_ = restore(ctx)
			t.Fatalf("leader %s did not count a refused write (cabundle_syncer_errors_total{reason=%q}) within 30s", leader.Name, syncer.ReasonApplyFailed)
		}
		refusal := refusalInLog(leader.logTail(50))
		if !strings.Contains(refusal, "system:serviceaccount:"+stack.Namespace+":"+stack.SyncerServiceAccount) {
			_ = restore(ctx)
			t.Fatalf("leader %s did not log the ServiceAccount's refused patch; last lines:\n%s", leader.Name, leader.logTail(10))
		}
		logf("caBundle wiped without patch: leader %s refused %v write(s) so far: %s",
			leader.Name, applyFailures(*leader)-refusedBefore, refusal)
	}
	return func(ctx context.Context) error {
		if err := restore(ctx); err != nil {
			return err
		}
		return waitSyncerMayPatch(ctx, cs, true)
	}
}

// wipeCABundle empties the caBundle of every webhook entry.
func wipeCABundle(ctx context.Context, cs kubernetes.Interface) error {
	mwcs := cs.AdmissionregistrationV1().MutatingWebhookConfigurations()
	return retry.RetryOnConflict(retry.DefaultRetry, func() error {
		mwc, err := mwcs.Get(ctx, stack.WebhookConfigName, metav1.GetOptions{})
		if err != nil {
			return err
		}
		for i := range mwc.Webhooks {
			mwc.Webhooks[i].ClientConfig.CABundle = nil
		}
		_, err = mwcs.Update(ctx, mwc, metav1.UpdateOptions{FieldManager: "e2e-check"})
		return err
	})
}

// waitSyncerMayPatch waits until the API server's authorizer answers want
// to "may ServiceAccount cabundle-syncer patch the
// MutatingWebhookConfiguration".
func waitSyncerMayPatch(ctx context.Context, cs kubernetes.Interface, want bool) error {
	sar := &authorizationv1.SubjectAccessReview{Spec: authorizationv1.SubjectAccessReviewSpec{
		User:   "system:serviceaccount:" + stack.Namespace + ":" + stack.SyncerServiceAccount,
		Groups: []string{"system:serviceaccounts", "system:serviceaccounts:" + stack.Namespace, "system:authenticated"},
		ResourceAttributes: &authorizationv1.ResourceAttributes{
			Group: "admissionregistration.k8s.io", Resource: "mutatingwebhookconfigurations",
			Name: stack.WebhookConfigName, Verb: "patch",
		},
	}}
	var got bool
	err := wait.PollUntilContextTimeout(ctx, 50*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		res, err := cs.AuthorizationV1().SubjectAccessReviews().Create(ctx, sar, metav1.CreateOptions{})
		if err != nil {
			return false, nil
		}
		got = res.Status.Allowed
		return got == want, nil
	})
	if err != nil {
		return fmt.Errorf("ServiceAccount %s may patch %s: %v, want %v within 30s", stack.SyncerServiceAccount, stack.WebhookConfigName, got, want)
	}
	return nil
}

// applyFailures is the leader's count of refused caBundle writes; a series
// not yet created counts 0.
func applyFailures(r replica) float64 {
	v, err := r.Metric("cabundle_syncer_errors_total", `{reason="`+syncer.ReasonApplyFailed+`"}`)
	if err != nil {
		return 0
	}
	return v
}

// refusalInLog returns the error of the last line of a syncer's JSON log
// that says a patch was forbidden, or "".
func refusalInLog(log string) string {
	lines := strings.Split(log, "\n")
	for i := len(lines) - 1; i >= 0; i-- {
		var line struct {
			Error string `json:"error"`
		}
		if json.Unmarshal([]byte(lines[i]), &line) == nil && strings.Contains(line.Error, "cannot patch resource") {
			return line.Error
		}
	}
	return ""
}

// onceCleanup returns restore made safe to call twice, and calls it when
// t ends if the test did not, so that a failed step never leaves the
// shared installation broken for the next test.
func onceCleanup(t *testing.T, restore func(context.Context) error) func(context.Context) error {
	var once sync.Once
	var err error
	do := func(ctx context.Context) error {
		once.Do(func() { err = restore(ctx) })
		return err
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		if err := do(ctx); err != nil {
			t.Errorf("restore: %v", err)
		}
	})
	return do
}

// targetNamespace creates the Kyma-managed namespace the docs pass to
// --target-namespace, and removes it when t ends.
func targetNamespace(t *testing.T) {
	t.Helper()
	createNamespace(t, docsTargetNamespace, true)
}

// checker runs `cabundle-syncer check`, built as the image builds it.
type checker struct{ bin string }

func newChecker(t *testing.T) checker {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	bin, err := process.Build(ctx, stack.SyncerName, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return checker{bin: bin}
}

// checkRun is one run of the command.
type checkRun struct {
	args           []string
	code           int
	stdout, stderr string
	took           time.Duration
}

func (r checkRun) String() string {
	return fmt.Sprintf("cabundle-syncer check %s: exit code %d (%s)\nstdout:\n%s\nstderr:\n%s",
		strings.Join(r.args, " "), r.code, r.took.Round(time.Millisecond), r.stdout, r.stderr)
}

// run runs `cabundle-syncer check args...` with env added to an
// environment that names no cluster of its own.
func (c checker) run(t *testing.T, env []string, args ...string) checkRun {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, c.bin, append([]string{"check"}, args...)...)
	cmd.Env = slices.DeleteFunc(os.Environ(), func(kv string) bool {
		return strings.HasPrefix(kv, "KUBECONFIG=") || strings.HasPrefix(kv, "KUBERNETES_SERVICE_")
	})
	cmd.Env = append(cmd.Env, env...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	start := time.Now()
	err := cmd.Run()
	run := checkRun{args: args, stdout: stdout.String(), stderr: stderr.String(), took: time.Since(start)}
	var exitErr *exec.ExitError
	if err != nil && !errors.As(err, &exitErr) {
		t.Fatalf("run %s: %v", c.bin, err)
	}
	run.code = cmd.ProcessState.ExitCode()
	return run
}

// report runs the command with args that include -o json and decodes the
// report.
func (c checker) report(t *testing.T, env []string, args ...string) (checkRun, check.Report) {
	t.Helper()
	run := c.run(t, env, args...)
	r, err := decodeReport(run.stdout, slices.Contains(args, "--target-namespace"))
	if err != nil {
		t.Fatalf("%v\n%s", err, run)
	}
	return run, r
}

// waitReport runs the JSON form every 250 ms until done accepts the
// report, and returns the last run and report and whether done did.
func (c checker) waitReport(t *testing.T, env []string, timeout time.Duration, args []string, done func(check.Report) bool) (checkRun, check.Report, bool) {
	t.Helper()
	var run checkRun
	var r check.Report
	err := wait.PollUntilContextTimeout(context.Background(), 250*time.Millisecond, timeout, true, func(context.Context) (bool, error) {
		run, r = c.report(t, env, args...)
		return done(r), nil
	})
	return run, r, err == nil
}

// decodeReport parses the JSON report strictly and checks that it holds
// the items in their fixed order.
func decodeReport(stdout string, withNamespace bool) (check.Report, error) {
	dec := json.NewDecoder(strings.NewReader(stdout))
	dec.DisallowUnknownFields()
	var r check.Report
	if err := dec.Decode(&r); err != nil {
		return r, fmt.Errorf("stdout is not the JSON report: %w", err)
	}
	want := checkIDs(withNamespace)
	got := make([]string, 0, len(r.Checks))
	for _, c := range r.Checks {
		got = append(got, c.ID)
	}
	if !slices.Equal(got, want) {
		return r, fmt.Errorf("report items %v, want %v", got, want)
	}
	return r, nil
}

// result returns the item id of r.
func result(r check.Report, id string) check.Result {
	for _, c := range r.Checks {
		if c.ID == id {
			return c
		}
	}
	return check.Result{ID: id}
}

// statusesAre reports whether every item of r has the status want gives
// it on this system.
func statusesAre(r check.Report, want map[string]check.Status) bool {
	want = withSystem(want)
	for _, res := range r.Checks {
		if res.Status != wantStatus(want, res.ID) {
			return false
		}
	}
	return true
}

// wantStatus is the status want gives item id: PASS unless named.
func wantStatus(want map[string]check.Status, id string) check.Status {
	if st, ok := want[id]; ok {
		return st
	}
	return check.StatusPass
}

// withSystem adds to want what the system shows by its nature: from
// outside a kind cluster the Pods' addresses cannot be dialled, so
// served-certificate warns there unless want says otherwise. The real
// node's Pods can be dialled.
func withSystem(want map[string]check.Status) map[string]check.Status {
	if _, ok := sys.(*nodeSystem); ok {
		return want
	}
	out := map[string]check.Status{check.IDServedCertificate: check.StatusWarn}
	maps.Copy(out, want)
	return out
}

// overall is the report status and exit code that want's statuses make,
// as the operators' contract has it: any FAIL fails with 2, else any SKIP
// is INCOMPLETE with 4, else any WARN warns with 1, else it passes with 0.
func overall(want map[string]check.Status) (check.Status, int) {
	statuses := slices.Collect(maps.Values(want))
	switch {
	case slices.Contains(statuses, check.StatusFail):
		return check.StatusFail, 2
	case slices.Contains(statuses, check.StatusSkip):
		return check.StatusIncomplete, 4
	case slices.Contains(statuses, check.StatusWarn):
		return check.StatusWarn, 1
	default:
		return check.StatusPass, 0
	}
}

// assertReport holds every item of r to want (PASS where want names none):
// the status, a remediation exactly where it did not pass, and the overall
// status and exit code that follow. Nothing goes to stderr.
func assertReport(t *testing.T, run checkRun, r check.Report, want map[string]check.Status) {
	t.Helper()
	want = withSystem(want)
	status, code := overall(want)
	ok := true
	for _, res := range r.Checks {
		st := wantStatus(want, res.ID)
		if res.Status != st {
			t.Errorf("%s = %s %q, want %s", res.ID, res.Status, res.Message, st)
			ok = false
		}
		if res.Message == "" {
			t.Errorf("%s has no message", res.ID)
		}
		if pass := res.Status == check.StatusPass; pass != (res.Remediation == "") {
			t.Errorf("%s %s with remediation %q: want one exactly when it did not pass", res.ID, res.Status, res.Remediation)
		}
	}
	if r.Status != status || run.code != code {
		t.Errorf("report status %s, exit code %d; want %s, %d", r.Status, run.code, status, code)
		ok = false
	}
	if run.stderr != "" {
		t.Errorf("stderr = %q, want nothing: the report is the output", run.stderr)
	}
	if !ok {
		t.Logf("report:\n%s", run.stdout)
	}
}

// assertTable holds the table form to want: each item's status, the arrow
// line with the remediation under each that did not pass, the closing
// status and the exit code.
func assertTable(t *testing.T, run checkRun, want map[string]check.Status) {
	t.Helper()
	want = withSystem(want)
	status, code := overall(want)
	if run.code != code || run.stderr != "" {
		t.Errorf("table: exit code %d, stderr %q; want %d and nothing", run.code, run.stderr, code)
	}
	lines := strings.Split(run.stdout, "\n")
	for _, id := range checkIDs(false) {
		st := wantStatus(want, id)
		if got := tableStatus(run.stdout, id); got != string(st) {
			t.Errorf("table: %s is %q, want %s", id, got, st)
		}
		i := slices.IndexFunc(lines, func(l string) bool { return strings.HasPrefix(l, id+" ") })
		arrow := i >= 0 && i+1 < len(lines) && strings.HasPrefix(strings.TrimSpace(lines[i+1]), "→ ") && len(strings.TrimSpace(lines[i+1])) > len("→ ")
		if arrow != (st != check.StatusPass) {
			t.Errorf("table: %s %s with a remediation line: %v, want %v", id, st, arrow, st != check.StatusPass)
		}
	}
	if !strings.HasSuffix(run.stdout, "\nStatus: "+string(status)+"\n") {
		t.Errorf("table: want it to end with Status: %s:\n%s", status, run.stdout)
	}
}

// tableStatus returns the STATUS column of item id in the table, or "".
func tableStatus(table, id string) string {
	for _, l := range strings.Split(table, "\n") {
		if f := strings.Fields(l); len(f) >= 2 && f[0] == id {
			return f[1]
		}
	}
	return ""
}

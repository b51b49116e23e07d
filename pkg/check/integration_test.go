package check_test

import (
	"cmp"
	"context"
	"testing"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"

	"github.com/kyma-project/kim-snatch/pkg/affinity"
	"github.com/kyma-project/kim-snatch/pkg/check"
	"github.com/kyma-project/kim-snatch/pkg/check/checktest"
	"github.com/kyma-project/kim-snatch/test/framework"
)

// Names of their own, so that the test leaves a real install alone when it
// runs against an existing cluster (SNATCH_TEST_KUBECONFIG).
const (
	itNamespace = "kim-snatch-check"
	itMWC       = "kim-snatch-check-mutating-webhook-configuration"
)

// TestEachFaultFailsOnlyItsCheckAgainstARealAPIServer starts from a healthy install, breaks
// one item at a time and restores it: each fault fails exactly its own
// check, with a remediation, and the cluster is healthy again afterwards.
func TestEachFaultFailsOnlyItsCheckAgainstARealAPIServer(t *testing.T) {
	c := framework.Integration(t, framework.Options{}, "")
	cs := c.Clientset
	ctx := context.Background()
	if !c.External() {
		if _, err := c.CreateNodes(ctx, framework.KymaPool, 1); err != nil {
			t.Fatal(err)
		}
	}
	in := checktest.Healthy(t, itNamespace, itMWC, time.Now())
	if err := in.Create(ctx, cs); err != nil {
		t.Fatal(err)
	}
	cfg := in.Config()
	cfg.TargetNamespace = itNamespace
	ids := append(allIDs[:len(allIDs):len(allIDs)], check.IDNamespace)

	run := func(t *testing.T) check.Report {
		t.Helper()
		ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
		defer cancel()
		return check.Run(ctx, cs, cfg, time.Now())
	}
	// No webhook answers in this control plane, so the dry-run Pod comes
	// back without the term: admission fails here by design, and the
	// other items pass. test/e2e runs it against the shipped webhook.
	noWebhook := map[string]check.Status{check.IDAdmission: check.StatusFail}
	healthy := run(t)
	assertReport(t, healthy, ids, noWebhook)
	if healthy.ExitCode() != check.ExitFail {
		t.Fatalf("healthy install: exit code %d, report %+v", healthy.ExitCode(), healthy)
	}

	secrets := cs.CoreV1().Secrets(itNamespace)
	tests := []checklistFault{
		{
			name: "deleted_secret_fails_ca_secret",
			breakIt: func(t *testing.T) {
				must(t, secrets.Delete(ctx, in.Secret.Name, metav1.DeleteOptions{}))
			},
			restore: func(t *testing.T) {
				_, err := secrets.Create(ctx, in.Secret.DeepCopy(), metav1.CreateOptions{})
				must(t, err)
			},
			fails: check.IDCASecret,
			skips: []string{check.IDCABundle},
		},
		{
			name: "garbled_ca_crt_fails_ca_secret",
			breakIt: func(t *testing.T) {
				updateSecret(t, cs, in.Secret.Name, func(s *corev1.Secret) { s.Data[checktest.CAKey] = []byte("-----BEGIN CERTIFICATE-----\ngarbage\n") })
			},
			restore: func(t *testing.T) {
				updateSecret(t, cs, in.Secret.Name, func(s *corev1.Secret) { s.Data[checktest.CAKey] = in.CA.CertPEM })
			},
			fails: check.IDCASecret,
			skips: []string{check.IDCABundle},
		},
		{
			name: "wiped_ca_bundle_fails_ca_bundle",
			breakIt: func(t *testing.T) {
				updateMWC(t, cs, func(m *admissionregistrationv1.MutatingWebhookConfiguration) {
					for i := range m.Webhooks {
						m.Webhooks[i].ClientConfig.CABundle = nil
					}
				})
			},
			restore: func(t *testing.T) {
				updateMWC(t, cs, func(m *admissionregistrationv1.MutatingWebhookConfiguration) {
					for i := range m.Webhooks {
						m.Webhooks[i].ClientConfig.CABundle = in.CA.CertPEM
					}
				})
			},
			fails: check.IDCABundle,
			skips: []string{check.IDServedCertificate},
		},
		{
			name: "deleted_webhook_configuration_fails_its_item",
			breakIt: func(t *testing.T) {
				must(t, cs.AdmissionregistrationV1().MutatingWebhookConfigurations().Delete(ctx, itMWC, metav1.DeleteOptions{}))
			},
			restore: func(t *testing.T) {
				_, err := cs.AdmissionregistrationV1().MutatingWebhookConfigurations().Create(ctx, in.MWC.DeepCopy(), metav1.CreateOptions{})
				must(t, err)
			},
			fails: check.IDWebhookConfiguration,
			skips: []string{check.IDCABundle, check.IDNamespace, check.IDWebhookEndpoints, check.IDServedCertificate},
		},
		{
			name: "no_ready_webhook_pod_fails_webhook_pods",
			breakIt: func(t *testing.T) {
				for _, p := range in.WebhookPods {
					setPodStatus(t, cs, checktest.NotReady(p))
				}
			},
			restore: func(t *testing.T) {
				for _, p := range in.WebhookPods {
					setPodStatus(t, cs, p)
				}
			},
			fails: check.IDWebhookPods,
		},
		{
			name: "released_lease_fails_syncer_lease",
			breakIt: func(t *testing.T) {
				updateLease(t, cs, in.Lease.Name, func(spec *coordinationv1.LeaseSpec) { spec.HolderIdentity = ptr.To("") })
			},
			restore: func(t *testing.T) {
				updateLease(t, cs, in.Lease.Name, func(spec *coordinationv1.LeaseSpec) { spec.HolderIdentity = in.Lease.Spec.HolderIdentity })
			},
			fails: check.IDSyncerLease,
		},
		{
			name: "expired_lease_fails_syncer_lease",
			breakIt: func(t *testing.T) {
				updateLease(t, cs, in.Lease.Name, func(spec *coordinationv1.LeaseSpec) {
					spec.RenewTime = ptr.To(metav1.NewMicroTime(time.Now().Add(-2 * checktest.LeaseDurationSeconds * time.Second)))
				})
			},
			restore: func(t *testing.T) {
				updateLease(t, cs, in.Lease.Name, func(spec *coordinationv1.LeaseSpec) { spec.RenewTime = ptr.To(metav1.NewMicroTime(time.Now())) })
			},
			fails: check.IDSyncerLease,
		},
		{
			// RBAC decides: the API server's authorizer answers the
			// SubjectAccessReview for the leader's ServiceAccount.
			name: "unbound_syncer_role_fails_syncer_lease",
			breakIt: func(t *testing.T) {
				must(t, cs.RbacV1().ClusterRoleBindings().Delete(ctx, in.SyncerBinding.Name, metav1.DeleteOptions{}))
				waitSyncerMayPatch(t, cs, in, false)
			},
			restore: func(t *testing.T) {
				_, err := cs.RbacV1().ClusterRoleBindings().Create(ctx, in.SyncerBinding.DeepCopy(), metav1.CreateOptions{})
				must(t, err)
				waitSyncerMayPatch(t, cs, in, true)
			},
			fails: check.IDSyncerLease,
		},
		{
			name: "tainted_pool_warns_kyma_pool",
			breakIt: func(t *testing.T) {
				setPoolTaints(t, cs, []corev1.Taint{{Key: "dedicated", Value: "other", Effect: corev1.TaintEffectNoSchedule}})
			},
			restore: func(t *testing.T) { setPoolTaints(t, cs, nil) },
			fails:   check.IDKymaPool,
			status:  check.StatusWarn,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) { breakAndRestore(t, run, ids, noWebhook, tt) })
	}
	t.Run("emergency_disable_warns_until_restored", func(t *testing.T) { disableAndRestore(t, cs, in, run, ids, noWebhook) })
}

// checklistFault breaks one item of a healthy install and restores it.
type checklistFault struct {
	name    string
	breakIt func(t *testing.T)
	restore func(t *testing.T)
	fails   string
	// status is the status of fails; FAIL when empty.
	status check.Status
	// skips are the checks that depend on what was broken.
	skips []string
}

// breakAndRestore applies tt: while it is broken, exactly its check fails
// (or warns) and the checks that depend on it skip; once restored, the
// report is healthy again but for noWebhook.
func breakAndRestore(t *testing.T, run func(*testing.T) check.Report, ids []string, noWebhook map[string]check.Status, tt checklistFault) {
	tt.breakIt(t)
	want := map[string]check.Status{tt.fails: cmp.Or(tt.status, check.StatusFail), check.IDAdmission: check.StatusFail}
	for _, id := range tt.skips {
		want[id] = check.StatusSkip
	}
	broken := run(t)
	assertReport(t, broken, ids, want)
	if broken.ExitCode() != check.ExitFail { // admission fails throughout
		t.Errorf("exit code %d, want %d", broken.ExitCode(), check.ExitFail)
	}
	for _, r := range broken.Checks {
		if r.ID == tt.fails {
			t.Logf("%s %s: %s\n  → %s", r.ID, r.Status, r.Message, r.Remediation)
		}
	}

	tt.restore(t)
	restored := run(t)
	assertReport(t, restored, ids, noWebhook)
	if restored.ExitCode() != check.ExitFail {
		t.Fatalf("after restoring: exit code %d; the next cases would start broken", restored.ExitCode())
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func updateSecret(t *testing.T, cs kubernetes.Interface, name string, change func(*corev1.Secret)) {
	t.Helper()
	ctx := context.Background()
	s, err := cs.CoreV1().Secrets(itNamespace).Get(ctx, name, metav1.GetOptions{})
	must(t, err)
	change(s)
	_, err = cs.CoreV1().Secrets(itNamespace).Update(ctx, s, metav1.UpdateOptions{})
	must(t, err)
}

func updateMWC(t *testing.T, cs kubernetes.Interface, change func(*admissionregistrationv1.MutatingWebhookConfiguration)) {
	t.Helper()
	ctx := context.Background()
	m, err := cs.AdmissionregistrationV1().MutatingWebhookConfigurations().Get(ctx, itMWC, metav1.GetOptions{})
	must(t, err)
	change(m)
	_, err = cs.AdmissionregistrationV1().MutatingWebhookConfigurations().Update(ctx, m, metav1.UpdateOptions{})
	must(t, err)
}

func updateLease(t *testing.T, cs kubernetes.Interface, name string, change func(*coordinationv1.LeaseSpec)) {
	t.Helper()
	ctx := context.Background()
	l, err := cs.CoordinationV1().Leases(itNamespace).Get(ctx, name, metav1.GetOptions{})
	must(t, err)
	change(&l.Spec)
	_, err = cs.CoordinationV1().Leases(itNamespace).Update(ctx, l, metav1.UpdateOptions{})
	must(t, err)
}

// setPodStatus writes want's status to the Pod of the same name, as a
// kubelet would.
func setPodStatus(t *testing.T, cs kubernetes.Interface, want *corev1.Pod) {
	t.Helper()
	ctx := context.Background()
	p, err := cs.CoreV1().Pods(itNamespace).Get(ctx, want.Name, metav1.GetOptions{})
	must(t, err)
	p.Status = *want.Status.DeepCopy()
	_, err = cs.CoreV1().Pods(itNamespace).UpdateStatus(ctx, p, metav1.UpdateOptions{})
	must(t, err)
}

// setPoolTaints gives every Node of the Kyma pool taints, as a pool that
// an operator dedicated to something else has.
func setPoolTaints(t *testing.T, cs kubernetes.Interface, taints []corev1.Taint) {
	t.Helper()
	ctx := context.Background()
	nodes, err := cs.CoreV1().Nodes().List(ctx, metav1.ListOptions{LabelSelector: affinity.DefaultPoolLabelKey + "=" + affinity.DefaultWorkerPool})
	must(t, err)
	if len(nodes.Items) == 0 {
		t.Fatal("no Node in the Kyma pool")
	}
	for i := range nodes.Items {
		n := &nodes.Items[i]
		n.Spec.Taints = taints
		_, err := cs.CoreV1().Nodes().Update(ctx, n, metav1.UpdateOptions{})
		must(t, err)
	}
}

// waitSyncerMayPatch waits until the authorizer answers want for the
// syncer's patch of the MWC.
func waitSyncerMayPatch(t *testing.T, cs kubernetes.Interface, in *checktest.Install, want bool) {
	t.Helper()
	if err := in.WaitAuthorized(context.Background(), cs, want); err != nil {
		t.Fatal(err)
	}
}

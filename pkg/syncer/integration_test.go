package syncer

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	admissionregistrationv1ac "k8s.io/client-go/applyconfigurations/admissionregistration/v1"
	"k8s.io/utils/ptr"

	"github.com/kyma-project/kim-snatch/pkg/certtest"
	"github.com/kyma-project/kim-snatch/pkg/syncer/syncertest"
)

// The integration tests below run the syncer in this process against a real
// kube-apiserver: patches, field ownership, preconditions and field
// selectors are decided by the API server, not by the syncer.

func (h *harness) with(t *testing.T) *harness {
	c := *h
	c.t = t
	return &c
}

// putSecret creates or replaces the certificate Secret with data.
func (h *harness) putSecret(ctx context.Context, data map[string][]byte) {
	h.t.Helper()
	secret := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Namespace: h.cfg.SecretNamespace, Name: h.cfg.SecretName},
		Data:       data,
	}
	secrets := h.cluster.Clientset.CoreV1().Secrets(h.cfg.SecretNamespace)
	_, err := secrets.Update(ctx, secret, metav1.UpdateOptions{})
	if apierrors.IsNotFound(err) {
		_, err = secrets.Create(ctx, secret, metav1.CreateOptions{})
	}
	if err != nil {
		h.t.Fatal(err)
	}
}

func (h *harness) putCA(ctx context.Context, ca []byte) {
	h.t.Helper()
	h.putSecret(ctx, syncertest.CertSecret(h.cfg.SecretNamespace, h.cfg.SecretName, h.cfg.CAKey, ca).Data)
}

// putNewCA puts a new CA named name into the Secret and waits until the
// caBundle of every webhook entry holds it alone. It returns the CA and the
// object that showed it.
func (h *harness) putNewCA(ctx context.Context, name string) (
	*certtest.Cert, *admissionregistrationv1.MutatingWebhookConfiguration) {
	h.t.Helper()
	ca := certtest.MustCA(h.t, certtest.Options{CommonName: name})
	h.putCA(ctx, ca.CertPEM)
	alone := func(m *admissionregistrationv1.MutatingWebhookConfiguration) bool {
		return syncertest.EveryBundleIs(m, ca.Fingerprint())
	}
	mwc, _ := h.waitMWC(ctx, "CA "+name+" on every webhook", alone)
	return ca, mwc
}

// startSynced starts a syncer, with an overlap of an hour, for a new
// MutatingWebhookConfiguration with the webhooks, and waits until it has
// written a first CA. It returns the harness, the CA and the object that
// showed it.
func startSynced(ctx context.Context, t *testing.T, webhooks ...string) (
	*harness, *certtest.Cert, *admissionregistrationv1.MutatingWebhookConfiguration) {
	t.Helper()
	h := newHarness(t, time.Hour, webhooks...)
	h.start()
	ca, mwc := h.putNewCA(ctx, "ca")
	return h, ca, mwc
}

func (h *harness) state(mwc *admissionregistrationv1.MutatingWebhookConfiguration) map[string]stateRecordTimes {
	h.t.Helper()
	s, err := decodeState(mwc.Annotations[StateAnnotation])
	if err != nil {
		h.t.Fatal(err)
	}
	out := make(map[string]stateRecordTimes, len(s))
	for fp, r := range s {
		out[fp] = stateRecordTimes{FirstSeen: r.FirstSeen, SupersededAt: r.SupersededAt}
	}
	return out
}

type stateRecordTimes struct{ FirstSeen, SupersededAt time.Time }

func TestRotationsUnderLoadKeepEveryCAAndWriteOncePerCA(t *testing.T) {
	ctx := context.Background()
	webhooks := []string{"pods.kim-snatch.kyma-project.io", "pods-legacy.kim-snatch.kyma-project.io", "third.kim-snatch.kyma-project.io"}
	h, first, mwc := startSynced(ctx, t, webhooks...)
	cas := []*certtest.Cert{first}
	assertOwnsOnlyCABundle(t, mwc, webhooks)

	cas = rotateUntilVisible(ctx, t, h, cas, len(webhooks))
	mwc = h.mwc(ctx)
	assertEveryCAKept(t, h, mwc, cas)
	h.waitMetric(ctx, "cabundle_syncer_bundle_certificates", float64(len(cas)))
	// One write per CA, no more.
	h.waitMetric(ctx, "cabundle_syncer_updates_total", float64(len(cas)))
	if got, want := h.metric("cabundle_syncer_ca_not_after_seconds"), float64(cas[len(cas)-1].Cert.NotAfter.Unix()); got != want {
		t.Errorf("cabundle_syncer_ca_not_after_seconds = %v, want %v", got, want)
	}
	assertOwnsOnlyCABundle(t, mwc, webhooks)
}

// loadRotations is how often TestRotationsUnderLoadKeepEveryCAAndWriteOncePerCA rotates.
const loadRotations = 50

// rotateUntilVisible rotates the CA, each time as soon as the last CA is
// visible on the webhooks' entries, logs the latency of Secret write →
// caBundle visible on every entry, and returns cas with the new CAs.
func rotateUntilVisible(ctx context.Context, t *testing.T, h *harness, cas []*certtest.Cert, webhooks int) []*certtest.Cert {
	t.Helper()
	latencies := make([]time.Duration, 0, loadRotations)
	for i := 1; i <= loadRotations; i++ {
		ca := certtest.MustCA(t, certtest.Options{CommonName: fmt.Sprintf("ca-%d", i)})
		cas = append(cas, ca)
		start := time.Now()
		h.putCA(ctx, ca.CertPEM)
		_, seen := h.waitMWC(ctx, fmt.Sprintf("CA %d on every webhook", i), func(m *admissionregistrationv1.MutatingWebhookConfiguration) bool {
			return syncertest.EveryBundleHas(m, ca.Fingerprint())
		})
		latencies = append(latencies, seen.Sub(start))
	}
	t.Logf("Secret write → caBundle visible on all %d webhooks, %d rotations: p50 %s, p99 %s, max %s (target p99 ≤ 1s); %v resourceVersion conflicts retried",
		webhooks, loadRotations, syncertest.Percentile(latencies, 50), syncertest.Percentile(latencies, 99), slices.Max(latencies),
		h.metric("cabundle_syncer_errors_total", ReasonApplyConflict))
	return cas
}

// assertEveryCAKept checks that nothing was lost on the way: with a
// one-hour overlap every CA is still in every bundle of mwc, the current
// one first, and the state has a record for each. (The previous CAs are
// ordered by the second they were superseded, and then by fingerprint, so
// rotations within one second do not keep their order.)
func assertEveryCAKept(t *testing.T, h *harness, mwc *admissionregistrationv1.MutatingWebhookConfiguration, cas []*certtest.Cert) {
	t.Helper()
	all := make([]string, 0, len(cas))
	for _, ca := range cas {
		all = append(all, ca.Fingerprint())
	}
	slices.Sort(all)
	for _, wh := range mwc.Webhooks {
		got := certtest.Fingerprints(wh.ClientConfig.CABundle)
		if len(got) == 0 || got[0] != cas[len(cas)-1].Fingerprint() {
			t.Errorf("webhook %s: the bundle does not start with the current CA", wh.Name)
		}
		slices.Sort(got)
		if !slices.Equal(got, all) {
			t.Errorf("webhook %s: the bundle holds %d CAs, want all %d", wh.Name, len(got), len(all))
		}
	}
	state := h.state(mwc)
	if len(state) != len(cas) {
		t.Errorf("state has %d records, want %d", len(state), len(cas))
	}
	for i, ca := range cas {
		rec, ok := state[ca.Fingerprint()]
		switch {
		case !ok:
			t.Errorf("no record for CA %d", i)
		case i == len(cas)-1 && !rec.SupersededAt.IsZero():
			t.Errorf("the current CA is recorded as superseded at %s", rec.SupersededAt)
		case i < len(cas)-1 && rec.SupersededAt.IsZero():
			t.Errorf("CA %d is not recorded as superseded", i)
		}
	}
}

func TestRotationKeepsThePreviousCAForTheOverlapOnly(t *testing.T) {
	ctx := context.Background()
	const overlap = 3 * time.Second
	h := newHarness(t, overlap, "a.kim-snatch.kyma-project.io", "b.kim-snatch.kyma-project.io")
	h.start()
	caA, _ := h.putNewCA(ctx, "ca-a")
	caB := certtest.MustCA(t, certtest.Options{CommonName: "ca-b"})

	rotated := time.Now()
	h.putCA(ctx, caB.CertPEM)
	mwc, _ := h.waitMWC(ctx, "CA B next to CA A", func(m *admissionregistrationv1.MutatingWebhookConfiguration) bool {
		return syncertest.EveryBundleHas(m, caB.Fingerprint())
	})
	if !syncertest.EveryBundleIs(mwc, caB.Fingerprint(), caA.Fingerprint()) {
		t.Fatalf("after the rotation the bundle holds %v, want [B A]", certtest.Fingerprints(mwc.Webhooks[0].ClientConfig.CABundle))
	}
	supersededAt := h.state(mwc)[caA.Fingerprint()].SupersededAt
	if supersededAt.IsZero() {
		t.Fatal("CA A is not recorded as superseded")
	}

	// Nothing else happens: the requeue at the end of the overlap alone
	// must prune A. Every version seen on the way holds both CAs.
	mwc, pruned := h.waitMWC(ctx, "CA A pruned", func(m *admissionregistrationv1.MutatingWebhookConfiguration) bool {
		if syncertest.EveryBundleIs(m, caB.Fingerprint()) {
			return true
		}
		if !syncertest.EveryBundleIs(m, caB.Fingerprint(), caA.Fingerprint()) {
			t.Errorf("intermediate bundle %v, want [B A]", certtest.Fingerprints(m.Webhooks[0].ClientConfig.CABundle))
		}
		return false
	})
	if deadline := supersededAt.Add(overlap); pruned.Before(deadline) {
		t.Errorf("CA A was pruned at %s, before its overlap ended at %s", pruned.Format(time.RFC3339Nano), deadline.Format(time.RFC3339Nano))
	}
	if state := h.state(mwc); len(state) != 1 || state[caB.Fingerprint()].FirstSeen.IsZero() {
		t.Errorf("state after pruning = %v, want only CA B", state)
	}
	t.Logf("CA A pruned %s after the rotation (overlap %s)", pruned.Sub(rotated).Round(time.Millisecond), overlap)
}

func TestInvalidSourceLeavesTheBundleAlone(t *testing.T) {
	ctx := context.Background()
	h, good, _ := startSynced(ctx, t, "a.kim-snatch.kyma-project.io", "b.kim-snatch.kyma-project.io")
	h.waitMetric(ctx, "cabundle_syncer_in_sync", 1)

	now := time.Now()
	expired := certtest.MustCA(t, certtest.Options{CommonName: "expired", NotBefore: now.Add(-48 * time.Hour), NotAfter: now.Add(-time.Hour)})
	leaf := certtest.MustSelfSigned(t, certtest.Options{DNSNames: []string{"webhook.kyma-system.svc"}, NotBefore: now.Add(-time.Hour), NotAfter: now.Add(24 * time.Hour)})
	stranger := certtest.MustCA(t, certtest.Options{CommonName: "stranger"})
	withCA := func(ca []byte) func(context.Context, *harness) {
		return func(ctx context.Context, h *harness) { h.putCA(ctx, ca) }
	}
	tests := []struct {
		name        string
		mutate      func(context.Context, *harness)
		reason      string
		eventReason string
	}{
		{
			name: "secret_deleted_keeps_the_bundle",
			mutate: func(ctx context.Context, h *harness) {
				if err := h.cluster.Clientset.CoreV1().Secrets(h.cfg.SecretNamespace).Delete(ctx, h.cfg.SecretName, metav1.DeleteOptions{}); err != nil {
					h.t.Fatal(err)
				}
			},
			reason:      ReasonSecretNotFound,
			eventReason: EventSourceNotFound,
		},
		{
			name: "ca_crt_missing_keeps_the_bundle",
			mutate: func(ctx context.Context, h *harness) {
				h.putSecret(ctx, map[string][]byte{corev1.TLSCertKey: good.CertPEM, corev1.TLSPrivateKeyKey: []byte("key")})
			},
			reason:      ReasonCAKeyMissing,
			eventReason: EventSourceKeyMissing,
		},
		{name: "ca_crt_garbage_keeps_the_bundle", mutate: withCA([]byte("-----BEGIN CERTIFICATE-----\ngarbage\n")), reason: "unparsable", eventReason: EventSourceUnparsable},
		{name: "ca_crt_empty_keeps_the_bundle", mutate: withCA([]byte{}), reason: "empty", eventReason: EventSourceEmpty},
		{name: "expired_ca_keeps_the_bundle", mutate: withCA(expired.CertPEM), reason: "expired", eventReason: EventSourceExpired},
		{name: "leaf_certificate_keeps_the_bundle", mutate: withCA(leaf.CertPEM), reason: "not-ca", eventReason: EventSourceNotCA},
		// A valid CA, but not the one that issued the certificate the webhook
		// serves: the API server would refuse every call with it.
		{name: "ca_not_the_issuer_of_tls_crt_keeps_the_bundle", mutate: func(ctx context.Context, h *harness) {
			h.putSecret(ctx, map[string][]byte{h.cfg.CAKey: stranger.CertPEM, corev1.TLSCertKey: good.CertPEM, corev1.TLSPrivateKeyKey: []byte("key")})
		}, reason: "not-issuer", eventReason: EventSourceNotIssuer},
		{name: "tls_crt_missing_keeps_the_bundle", mutate: func(ctx context.Context, h *harness) {
			h.putSecret(ctx, map[string][]byte{h.cfg.CAKey: stranger.CertPEM})
		}, reason: "not-issuer", eventReason: EventSourceNotIssuer},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := h.with(t)
			before := h.mwc(ctx)
			errorsBefore := h.metric("cabundle_syncer_errors_total", tt.reason)

			tt.mutate(ctx, h)
			ev, err := syncertest.WaitForEvent(ctx, h.cluster.Clientset, h.cfg.SecretNamespace, h.cfg.SecretName, corev1.EventTypeWarning, tt.eventReason, 30*time.Second)
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("Event %s: %s", ev.Reason, ev.Note)
			h.waitMetric(ctx, "cabundle_syncer_source_valid", 0)
			h.waitMetric(ctx, "cabundle_syncer_in_sync", 0)
			if got := h.metric("cabundle_syncer_errors_total", tt.reason); got <= errorsBefore {
				t.Errorf("cabundle_syncer_errors_total{reason=%q} = %v, want more than %v", tt.reason, got, errorsBefore)
			}
			assertUnchanged(t, before, h.mwc(ctx))
			h.running()

			// The good CA again: valid, in sync, and still no write, since
			// the bundle in place is the right one.
			h.putCA(ctx, good.CertPEM)
			h.waitMetric(ctx, "cabundle_syncer_source_valid", 1)
			h.waitMetric(ctx, "cabundle_syncer_in_sync", 1)
			assertUnchanged(t, before, h.mwc(ctx))
		})
	}
}

func TestExternalEditIsCorrectedWithoutALoop(t *testing.T) {
	ctx := context.Background()
	h, ca, mwc := startSynced(ctx, t, "a.kim-snatch.kyma-project.io", "b.kim-snatch.kyma-project.io")

	// An operator wipes the caBundles and sets failurePolicy: Fail.
	for i := range mwc.Webhooks {
		mwc.Webhooks[i].ClientConfig.CABundle = nil
		mwc.Webhooks[i].FailurePolicy = ptr.To(admissionregistrationv1.Fail)
	}
	if _, err := h.cluster.Clientset.AdmissionregistrationV1().MutatingWebhookConfigurations().Update(ctx, mwc, metav1.UpdateOptions{FieldManager: "kubectl-edit"}); err != nil {
		t.Fatal(err)
	}
	restored, _ := h.waitMWC(ctx, "the caBundle restored", func(m *admissionregistrationv1.MutatingWebhookConfiguration) bool {
		return syncertest.EveryBundleIs(m, ca.Fingerprint())
	})
	for _, wh := range restored.Webhooks {
		if wh.FailurePolicy == nil || *wh.FailurePolicy != admissionregistrationv1.Fail {
			t.Errorf("webhook %s: failurePolicy = %v, want the edited Fail", wh.Name, ptr.Deref(wh.FailurePolicy, ""))
		}
	}
	assertOwnsOnlyCABundle(t, restored, []string{"a.kim-snatch.kyma-project.io", "b.kim-snatch.kyma-project.io"})

	// No update loop: the correction wakes the syncer up again, and that
	// reconcile, like every later one, must find nothing to write. Reconcile
	// sets cabundle_syncer_in_sync to 1 only once it has decided, and after
	// it has counted its write, so each round resets the gauge and touches
	// the object, which runs one more reconcile. After the first round the
	// correcting reconcile is done; the 1 that the second round sees comes
	// from a later reconcile, which read the corrected object or a later one.
	const updates = 2
	h.waitMetric(ctx, "cabundle_syncer_updates_total", updates)
	last := restored
	for i := range 2 {
		h.metrics.InSync.Set(0)
		last = h.touch(ctx, last, i)
		h.waitMetric(ctx, "cabundle_syncer_in_sync", 1)
	}
	if after := h.mwc(ctx); after.ResourceVersion != last.ResourceVersion {
		t.Errorf("resourceVersion moved from %s to %s after the syncer reconciled its correction", last.ResourceVersion, after.ResourceVersion)
	}
	if got := h.metric("cabundle_syncer_updates_total"); got != updates {
		t.Errorf("cabundle_syncer_updates_total went from %v to %v after the syncer reconciled its correction", updates, got)
	}
}

// touch sets a label, which the syncer does not read, on mwc as another
// manager would, at mwc's resourceVersion, and returns the object written.
// A conflict means that something wrote the object after mwc.
func (h *harness) touch(ctx context.Context, mwc *admissionregistrationv1.MutatingWebhookConfiguration, n int) *admissionregistrationv1.MutatingWebhookConfiguration {
	h.t.Helper()
	patch := fmt.Sprintf(`{"metadata":{"resourceVersion":%q,"labels":{"test.kim-snatch.kyma-project.io/touch":"%d"}}}`, mwc.ResourceVersion, n)
	out, err := h.cluster.Clientset.AdmissionregistrationV1().MutatingWebhookConfigurations().Patch(ctx, mwc.Name, types.MergePatchType, []byte(patch), metav1.PatchOptions{FieldManager: "test-touch"})
	if apierrors.IsConflict(err) {
		h.t.Fatalf("%s was written after resourceVersion %s: %v", mwc.Name, mwc.ResourceVersion, err)
	}
	if err != nil {
		h.t.Fatalf("touch %s: %v", mwc.Name, err)
	}
	return out
}

func TestWebhookConfigurationDeletedThenRecreated(t *testing.T) {
	ctx := context.Background()
	webhooks := []string{"a.kim-snatch.kyma-project.io", "b.kim-snatch.kyma-project.io"}
	h, ca, _ := startSynced(ctx, t, webhooks...)

	mwcs := h.cluster.Clientset.AdmissionregistrationV1().MutatingWebhookConfigurations()
	if err := mwcs.Delete(ctx, h.cfg.WebhookConfiguration, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := syncertest.WaitForEvent(ctx, h.cluster.Clientset, h.cfg.SecretNamespace, h.cfg.SecretName, corev1.EventTypeWarning, EventWebhookConfigNotFound, 30*time.Second); err != nil {
		t.Fatal(err)
	}
	h.waitMetric(ctx, "cabundle_syncer_in_sync", 0)
	// Missing, not differing: no marker says it was deleted on purpose.
	h.waitMetric(ctx, "cabundle_syncer_webhook_configuration_found", 0)
	if got := h.metric("cabundle_syncer_emergency_disabled"); got != 0 {
		t.Errorf("cabundle_syncer_emergency_disabled = %v without the marker, want 0", got)
	}
	// The syncer never creates the object.
	if _, err := mwcs.Get(ctx, h.cfg.WebhookConfiguration, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Fatalf("after the delete, Get = %v, want NotFound", err)
	}

	if _, err := syncertest.CreateWebhookConfiguration(ctx, h.cluster.Clientset, syncertest.WebhookConfiguration(h.cfg.WebhookConfiguration, webhooks...)); err != nil {
		t.Fatal(err)
	}
	h.waitMWC(ctx, "the CA on the recreated object", func(m *admissionregistrationv1.MutatingWebhookConfiguration) bool {
		return syncertest.EveryBundleIs(m, ca.Fingerprint())
	})
	h.waitMetric(ctx, "cabundle_syncer_in_sync", 1)
	h.waitMetric(ctx, "cabundle_syncer_webhook_configuration_found", 1)
	h.running()
}

func TestCABundleAppliedByAnotherManagerIsCorrected(t *testing.T) {
	ctx := context.Background()
	webhooks := []string{"a.kim-snatch.kyma-project.io", "b.kim-snatch.kyma-project.io"}
	h, ca, _ := startSynced(ctx, t, webhooks...)

	// The previous kim-snatch applied the caBundle with force under its own
	// field manager, with a CA of its own.
	foreign := certtest.MustCA(t, certtest.Options{CommonName: "old-kim-snatch"})
	ac := admissionregistrationv1ac.MutatingWebhookConfiguration(h.cfg.WebhookConfiguration)
	for _, name := range webhooks {
		ac.WithWebhooks(admissionregistrationv1ac.MutatingWebhook().WithName(name).
			WithClientConfig(admissionregistrationv1ac.WebhookClientConfig().WithCABundle(foreign.CertPEM...)))
	}
	if _, err := h.cluster.Clientset.AdmissionregistrationV1().MutatingWebhookConfigurations().Apply(ctx, ac, metav1.ApplyOptions{FieldManager: "kim-snatch", Force: true}); err != nil {
		t.Fatal(err)
	}

	// The syncer writes its CA back, keeps the foreign CA for the overlap
	// (webhook Pods may still serve it), and its Update leaves the other
	// manager no caBundle: no conflict to take, no force.
	mwc, _ := h.waitMWC(ctx, "the caBundle corrected", func(m *admissionregistrationv1.MutatingWebhookConfiguration) bool {
		return syncertest.EveryBundleIs(m, ca.Fingerprint(), foreign.Fingerprint())
	})
	assertOwnsOnlyCABundle(t, mwc, webhooks)
	h.waitMetric(ctx, "cabundle_syncer_in_sync", 1)
}

// assertUnchanged fails unless the object was not written at all.
func assertUnchanged(t *testing.T, before, after *admissionregistrationv1.MutatingWebhookConfiguration) {
	t.Helper()
	if after.ResourceVersion != before.ResourceVersion {
		t.Errorf("resourceVersion changed from %s to %s", before.ResourceVersion, after.ResourceVersion)
	}
	if a, b := syncertest.Bundles(after), syncertest.Bundles(before); !slices.EqualFunc(a, b, bytes.Equal) {
		t.Errorf("caBundles changed")
	}
	if a, b := after.Annotations[StateAnnotation], before.Annotations[StateAnnotation]; a != b {
		t.Errorf("state annotation changed from %s to %s", b, a)
	}
}

// assertOwnsOnlyCABundle checks the managed fields: the syncer's manager,
// through an Update, owns the caBundle of every webhook entry and the state
// annotation (and the annotations map when it created it), and nothing else, not even the entries' keys (which would keep
// an entry alive that a deployer removes); no other manager owns any
// caBundle.
func assertOwnsOnlyCABundle(t *testing.T, mwc *admissionregistrationv1.MutatingWebhookConfiguration, webhooks []string) {
	t.Helper()
	var ours []string
	for _, mf := range mwc.ManagedFields {
		leaves := fieldLeaves(t, mf.FieldsV1)
		if mf.Manager != FieldManager {
			for _, l := range leaves {
				if strings.HasSuffix(l, "/f:caBundle") {
					t.Errorf("manager %s (%s) owns %s", mf.Manager, mf.Operation, l)
				}
			}
			continue
		}
		if mf.Operation != metav1.ManagedFieldsOperationUpdate {
			t.Errorf("manager %s used %s, want Update", FieldManager, mf.Operation)
		}
		for _, l := range leaves {
			// The map itself, when the syncer's write created it: an
			// object's annotations are no list entry that validation needs
			// whole, so owning the map keeps nothing alive.
			if l != "f:metadata/f:annotations/." {
				ours = append(ours, l)
			}
		}
	}
	want := []string{"f:metadata/f:annotations/f:" + StateAnnotation}
	for _, name := range webhooks {
		key := `f:webhooks/k:{"name":"` + name + `"}`
		want = append(want, key+"/f:clientConfig/f:caBundle")
	}
	slices.Sort(ours)
	slices.Sort(want)
	if !slices.Equal(ours, want) {
		t.Errorf("%s owns\n  %s\nwant\n  %s", FieldManager, strings.Join(ours, "\n  "), strings.Join(want, "\n  "))
	}
}

// fieldLeaves flattens a managedFields entry into slash-joined paths.
func fieldLeaves(t *testing.T, f *metav1.FieldsV1) []string {
	t.Helper()
	if f == nil {
		return nil
	}
	var tree map[string]any
	if err := json.Unmarshal(f.GetRawBytes(), &tree); err != nil {
		t.Fatal(err)
	}
	var out []string
	var walk func(prefix string, m map[string]any)
	walk = func(prefix string, m map[string]any) {
		for k, v := range m {
			p := k
			if prefix != "" {
				p = prefix + "/" + k
			}
			if sub, ok := v.(map[string]any); ok && len(sub) > 0 {
				walk(p, sub)
				continue
			}
			out = append(out, p)
		}
	}
	walk("", tree)
	return out
}

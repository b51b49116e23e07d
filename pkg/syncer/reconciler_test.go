package syncer

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/events"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/kyma-project/kim-snatch/pkg/certtest"
	"github.com/kyma-project/kim-snatch/pkg/syncer/syncertest"
)

// directReconciler returns a reconciler that reads straight from the API
// server, so that a test decides exactly what it sees.
func directReconciler(t *testing.T, h *harness) (*Reconciler, *events.FakeRecorder) {
	t.Helper()
	c, err := client.New(h.cluster.Config, client.Options{})
	if err != nil {
		t.Fatal(err)
	}
	m, err := NewMetrics(prometheus.NewRegistry())
	if err != nil {
		t.Fatal(err)
	}
	rec := events.NewFakeRecorder(100)
	return NewReconciler(c, rec, m, h.cfg), rec
}

// patchCABundle writes caBundlePatch through r's client as the reconciler's
// write does.
func patchCABundle(ctx context.Context, r *Reconciler, mwc *admissionregistrationv1.MutatingWebhookConfiguration,
	bundle []byte, annotation string) error {
	patch := client.RawPatch(types.JSONPatchType, caBundlePatch(mwc, bundle, annotation))
	return r.client.Patch(ctx, mwc.DeepCopy(), patch, client.FieldOwner(FieldManager))
}

// deleteRead deletes the object the syncer read, before it writes.
func deleteRead(ctx context.Context, h *harness, mwc *admissionregistrationv1.MutatingWebhookConfiguration) error {
	mwcs := h.cluster.Clientset.AdmissionregistrationV1().MutatingWebhookConfigurations()
	return mwcs.Delete(ctx, mwc.Name, metav1.DeleteOptions{})
}

// notRecreated fails t unless the write after deleteRead failed and the
// object is still gone.
func notRecreated(t *testing.T, h *harness, err error) {
	t.Helper()
	if err == nil {
		t.Fatal("apply to a deleted object succeeded")
	}
	mwcs := h.cluster.Clientset.AdmissionregistrationV1().MutatingWebhookConfigurations()
	_, getErr := mwcs.Get(context.Background(), h.cfg.WebhookConfiguration, metav1.GetOptions{})
	if !apierrors.IsNotFound(getErr) {
		t.Errorf("after apply = %v, Get = %v, want NotFound", err, getErr)
	}
}

// reconcileOnce runs one reconcile of r, failing t on an error, and returns
// when it asks to run again.
func reconcileOnce(ctx context.Context, t *testing.T, r *Reconciler) time.Duration {
	t.Helper()
	res, err := r.Reconcile(ctx, reconcile.Request{})
	if err != nil {
		t.Fatal(err)
	}
	return res.RequeueAfter
}

func TestApplyWritesAFreshReadAndRefusesAStaleOne(t *testing.T) {
	ctx := context.Background()
	ca := certtest.MustCA(t, certtest.Options{CommonName: "ca"})
	tests := []struct {
		name     string
		webhooks []string
		// before, if set, runs before the syncer reads the object.
		before func(ctx context.Context, h *harness) error
		// between runs after the syncer read the object and before it writes.
		between func(ctx context.Context, h *harness, mwc *admissionregistrationv1.MutatingWebhookConfiguration) error
		check   func(t *testing.T, h *harness, err error)
	}{
		{
			name: "fresh_read_is_written",
			between: func(context.Context, *harness, *admissionregistrationv1.MutatingWebhookConfiguration) error {
				return nil
			},
			check: func(t *testing.T, h *harness, err error) {
				if err != nil {
					t.Fatalf("apply = %v", err)
				}
				if mwc := h.mwc(ctx); !syncertest.EveryBundleIs(mwc, ca.Fingerprint()) {
					t.Error("the caBundle was not written")
				}
			},
		},
		{
			name: "stale_read_is_refused",
			between: func(ctx context.Context, h *harness, mwc *admissionregistrationv1.MutatingWebhookConfiguration) error {
				edited := mwc.DeepCopy()
				edited.Webhooks[0].TimeoutSeconds = ptr.To[int32](5)
				_, err := h.cluster.Clientset.AdmissionregistrationV1().MutatingWebhookConfigurations().Update(ctx, edited, metav1.UpdateOptions{})
				return err
			},
			check: func(t *testing.T, h *harness, err error) {
				if !apierrors.IsConflict(err) {
					t.Fatalf("apply = %v, want a conflict", err)
				}
				if mwc := h.mwc(ctx); len(mwc.Webhooks[0].ClientConfig.CABundle) != 0 {
					t.Error("a stale read was written")
				}
			},
		},
		{
			name:    "deleted_object_is_not_recreated",
			between: deleteRead,
			check:   notRecreated,
		},
		{
			// Without webhook entries, validation would not stop the apply
			// from creating an object; only the UID precondition does.
			name:     "deleted_object_without_webhooks_is_not_recreated",
			webhooks: []string{},
			between:  deleteRead,
			check:    notRecreated,
		},
		{
			// The patch addresses entries by index. Entry a already holds
			// the bundle, so only /webhooks/1 (b) is written; a deployer
			// that swaps the entries in between makes index 1 entry a. The
			// resourceVersion precondition refuses the write instead of
			// leaving b without a caBundle.
			name:     "reordered_entries_are_not_written_by_index",
			webhooks: []string{"a.kim-snatch.kyma-project.io", "b.kim-snatch.kyma-project.io"},
			before: func(ctx context.Context, h *harness) error {
				mwc := h.mwc(ctx)
				mwc.Webhooks[0].ClientConfig.CABundle = ca.CertPEM
				_, err := h.cluster.Clientset.AdmissionregistrationV1().MutatingWebhookConfigurations().Update(ctx, mwc, metav1.UpdateOptions{})
				return err
			},
			between: func(ctx context.Context, h *harness, mwc *admissionregistrationv1.MutatingWebhookConfiguration) error {
				swapped := mwc.DeepCopy()
				swapped.Webhooks[0], swapped.Webhooks[1] = swapped.Webhooks[1], swapped.Webhooks[0]
				_, err := h.cluster.Clientset.AdmissionregistrationV1().MutatingWebhookConfigurations().Update(ctx, swapped, metav1.UpdateOptions{})
				return err
			},
			check: func(t *testing.T, h *harness, err error) {
				if !apierrors.IsConflict(err) {
					t.Fatalf("apply = %v, want a conflict", err)
				}
				mwc := h.mwc(ctx)
				if mwc.Webhooks[0].Name != "b.kim-snatch.kyma-project.io" {
					t.Fatalf("entries %s, %s: the swap did not happen", mwc.Webhooks[0].Name, mwc.Webhooks[1].Name)
				}
				if len(mwc.Webhooks[0].ClientConfig.CABundle) != 0 || !bytes.Equal(mwc.Webhooks[1].ClientConfig.CABundle, ca.CertPEM) {
					t.Error("a write based on the old order reached the object")
				}
			},
		},
		{
			name: "recreated_object_is_not_written_from_the_old_read",
			between: func(ctx context.Context, h *harness, mwc *admissionregistrationv1.MutatingWebhookConfiguration) error {
				mwcs := h.cluster.Clientset.AdmissionregistrationV1().MutatingWebhookConfigurations()
				if err := mwcs.Delete(ctx, mwc.Name, metav1.DeleteOptions{}); err != nil {
					return err
				}
				_, err := syncertest.CreateWebhookConfiguration(ctx, h.cluster.Clientset, syncertest.WebhookConfiguration(mwc.Name, "a.kim-snatch.kyma-project.io"))
				return err
			},
			check: func(t *testing.T, h *harness, err error) {
				if err == nil {
					t.Fatal("apply based on the deleted object succeeded")
				}
				if mwc := h.mwc(ctx); len(mwc.Webhooks[0].ClientConfig.CABundle) != 0 {
					t.Error("the recreated object was written from a read of the old one")
				}
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			webhooks := tt.webhooks
			if webhooks == nil {
				webhooks = []string{"a.kim-snatch.kyma-project.io"}
			}
			h := newHarness(t, time.Hour, webhooks...)
			r, _ := directReconciler(t, h)
			if tt.before != nil {
				if err := tt.before(ctx, h); err != nil {
					t.Fatal(err)
				}
			}
			mwc := h.mwc(ctx)
			if err := tt.between(ctx, h, mwc); err != nil {
				t.Fatal(err)
			}
			err := patchCABundle(ctx, r, mwc, ca.CertPEM, "{}")
			t.Logf("patch: %v", err)
			tt.check(t, h, err)
		})
	}
}

func TestReconcileReportsAndRequeues(t *testing.T) {
	ctx := context.Background()
	h := newHarness(t, 90*time.Second, "a.kim-snatch.kyma-project.io")
	r, rec := directReconciler(t, h)
	clock := time.Now()
	r.now = func() time.Time { return clock }
	caA, caB := certtest.MustCA(t, certtest.Options{CommonName: "ca-a"}), certtest.MustCA(t, certtest.Options{CommonName: "ca-b"})
	h.putCA(ctx, caA.CertPEM)

	requeue := reconcileOnce(ctx, t, r)
	if want := time.Until(caA.Cert.NotAfter); requeue < want-time.Minute || requeue > want+time.Minute {
		t.Errorf("RequeueAfter with one CA = %s, want about its remaining validity %s", requeue, want)
	}
	expectEvent(t, rec, corev1.EventTypeNormal, EventCABundleUpdated)
	rv := h.mwc(ctx).ResourceVersion
	reconcileOnce(ctx, t, r)
	if got := h.mwc(ctx).ResourceVersion; got != rv {
		t.Errorf("a reconcile with nothing to do wrote: resourceVersion %s -> %s", rv, got)
	}
	if got := testutil.ToFloat64(r.metrics.Updates); got != 1 {
		t.Errorf("cabundle_syncer_updates_total = %v after one write", got)
	}
	expectNoEvent(t, rec)

	h.putCA(ctx, caB.CertPEM)
	requeue = reconcileOnce(ctx, t, r)
	// The overlap ends 90 s after the rotation, counted from the second
	// after the decision.
	if requeue <= 89*time.Second || requeue > 91*time.Second {
		t.Errorf("RequeueAfter during the overlap = %s, want about 90s", requeue)
	}
	if !syncertest.EveryBundleIs(h.mwc(ctx), caB.Fingerprint(), caA.Fingerprint()) {
		t.Error("the bundle does not hold [B A]")
	}

	clock = clock.Add(requeue)
	reconcileOnce(ctx, t, r)
	if !syncertest.EveryBundleIs(h.mwc(ctx), caB.Fingerprint()) {
		t.Error("the requeue at the end of the overlap did not prune CA A")
	}
}

func TestCacheHoldsOnlyTheThreeObjects(t *testing.T) {
	ctx := context.Background()
	h := newHarness(t, time.Hour, "a.kim-snatch.kyma-project.io")
	h.putCA(ctx, certtest.MustCA(t, certtest.Options{CommonName: "ca"}).CertPEM)
	h.putMarker(ctx)
	createNeighbours(ctx, t, h)

	cctx, cancel := context.WithCancel(ctx)
	defer cancel()
	c := syncertest.SyncedCache(cctx, t, h.cluster.Config, CacheOptions(h.cfg),
		&corev1.Secret{}, &admissionregistrationv1.MutatingWebhookConfiguration{}, &corev1.ConfigMap{})

	var secrets corev1.SecretList
	if err := c.List(ctx, &secrets); err != nil {
		t.Fatal(err)
	}
	if len(secrets.Items) != 1 || secrets.Items[0].Namespace != h.cfg.SecretNamespace || secrets.Items[0].Name != h.cfg.SecretName {
		t.Errorf("the cache holds %d Secrets, want only %s/%s", len(secrets.Items), h.cfg.SecretNamespace, h.cfg.SecretName)
	}
	var mwcs admissionregistrationv1.MutatingWebhookConfigurationList
	if err := c.List(ctx, &mwcs); err != nil {
		t.Fatal(err)
	}
	if len(mwcs.Items) != 1 || mwcs.Items[0].Name != h.cfg.WebhookConfiguration {
		t.Errorf("the cache holds %d MutatingWebhookConfigurations, want only %s", len(mwcs.Items), h.cfg.WebhookConfiguration)
	}
	if len(mwcs.Items) == 1 && mwcs.Items[0].ManagedFields != nil {
		t.Error("the cache keeps managedFields")
	}
	var cms corev1.ConfigMapList
	if err := c.List(ctx, &cms); err != nil {
		t.Fatal(err)
	}
	if len(cms.Items) != 1 || cms.Items[0].Namespace != h.cfg.SecretNamespace || cms.Items[0].Name != EmergencyDisableName {
		t.Errorf("the cache holds %d ConfigMaps, want only %s/%s", len(cms.Items), h.cfg.SecretNamespace, EmergencyDisableName)
	}
	// Reading any other type fails instead of starting a cluster-wide informer.
	var services corev1.ServiceList
	var notCached *cache.ErrResourceNotCached
	if err := c.List(ctx, &services); !errors.As(err, &notCached) {
		t.Errorf("List Services = %v, want ErrResourceNotCached", err)
	}
}

// createNeighbours creates what the cache must not see: Secrets and
// ConfigMaps next to the ones it reads, a Secret and a marker of the same
// name elsewhere, another webhook configuration.
func createNeighbours(ctx context.Context, t *testing.T, h *harness) {
	t.Helper()
	cs := h.cluster.Clientset
	for i := range 20 {
		meta := metav1.ObjectMeta{Namespace: h.cfg.SecretNamespace, Name: fmt.Sprintf("other-%d", i)}
		if _, err := cs.CoreV1().Secrets(meta.Namespace).Create(ctx, &corev1.Secret{ObjectMeta: meta}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		if _, err := cs.CoreV1().ConfigMaps(meta.Namespace).Create(ctx, &corev1.ConfigMap{ObjectMeta: meta}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := cs.CoreV1().Secrets("default").Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: h.cfg.SecretName}}, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	elsewhere := syncertest.DisableMarker("default", EmergencyDisableName, "another installation's", "someone")
	if _, err := cs.CoreV1().ConfigMaps("default").Create(ctx, elsewhere, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cs.CoreV1().ConfigMaps("default").Delete(context.Background(), EmergencyDisableName, metav1.DeleteOptions{})
	})
	other := uniqueName(t)
	if _, err := syncertest.CreateWebhookConfiguration(ctx, cs, syncertest.WebhookConfiguration(other, "a.kim-snatch.kyma-project.io")); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cs.AdmissionregistrationV1().MutatingWebhookConfigurations().Delete(context.Background(), other, metav1.DeleteOptions{})
	})
}

func expectEvent(t *testing.T, rec *events.FakeRecorder, eventType, reason string) {
	t.Helper()
	select {
	case ev := <-rec.Events:
		if !strings.HasPrefix(ev, eventType+" "+reason+" ") {
			t.Errorf("event %q, want %s %s", ev, eventType, reason)
		}
	default:
		t.Errorf("no event, want %s %s", eventType, reason)
	}
}

func expectNoEvent(t *testing.T, rec *events.FakeRecorder) {
	t.Helper()
	select {
	case ev := <-rec.Events:
		t.Errorf("unexpected event %q", ev)
	default:
	}
}

func TestReconcileRecordsStateForABundleAlreadyInPlace(t *testing.T) {
	ctx := context.Background()
	h := newHarness(t, time.Hour, "a.kim-snatch.kyma-project.io", "b.kim-snatch.kyma-project.io")
	r, rec := directReconciler(t, h)
	ca := certtest.MustCA(t, certtest.Options{CommonName: "ca"})
	h.putCA(ctx, ca.CertPEM)

	// The previous kim-snatch left the right CA in place, without state.
	mwc := h.mwc(ctx)
	for i := range mwc.Webhooks {
		mwc.Webhooks[i].ClientConfig.CABundle = ca.CertPEM
	}
	if _, err := h.cluster.Clientset.AdmissionregistrationV1().MutatingWebhookConfigurations().Update(ctx, mwc, metav1.UpdateOptions{FieldManager: "kim-snatch"}); err != nil {
		t.Fatal(err)
	}

	reconcileOnce(ctx, t, r)
	after := h.mwc(ctx)
	state, err := decodeState(after.Annotations[StateAnnotation])
	if err != nil || len(state) != 1 || state[ca.Fingerprint()].FirstSeen.IsZero() {
		t.Errorf("state = %v (%v), want a record of the CA", state, err)
	}
	if !syncertest.EveryBundleIs(after, ca.Fingerprint()) {
		t.Error("the caBundle changed")
	}
	if got := testutil.ToFloat64(r.metrics.Updates); got != 1 {
		t.Errorf("cabundle_syncer_updates_total = %v, want 1 (the state)", got)
	}
	expectNoEvent(t, rec) // the caBundle did not change; nothing to tell

	reconcileOnce(ctx, t, r)
	if got := h.mwc(ctx).ResourceVersion; got != after.ResourceVersion {
		t.Errorf("the second reconcile wrote again: resourceVersion %s -> %s", after.ResourceVersion, got)
	}
}

func TestOverlapSurvivesARestart(t *testing.T) {
	ctx := context.Background()
	const overlap = 90 * time.Second
	h := newHarness(t, overlap, "a.kim-snatch.kyma-project.io")
	caA, caB := certtest.MustCA(t, certtest.Options{CommonName: "ca-a"}), certtest.MustCA(t, certtest.Options{CommonName: "ca-b"})
	rotation := time.Now()

	// The first process syncs A, sees the rotation to B, and is gone.
	first, _ := directReconciler(t, h)
	first.now = func() time.Time { return rotation }
	h.putCA(ctx, caA.CertPEM)
	reconcileOnce(ctx, t, first)
	h.putCA(ctx, caB.CertPEM)
	reconcileOnce(ctx, t, first)

	// A new process, 60 s later, with nothing but the cluster to go on,
	// continues the same overlap: 30 s left, not a fresh 90 s.
	second, _ := directReconciler(t, h)
	second.now = func() time.Time { return rotation.Add(60 * time.Second) }
	requeue := reconcileOnce(ctx, t, second)
	if requeue <= 29*time.Second || requeue > 31*time.Second {
		t.Errorf("after the restart RequeueAfter = %s, want the 30 s left of the overlap", requeue)
	}
	if !syncertest.EveryBundleIs(h.mwc(ctx), caB.Fingerprint(), caA.Fingerprint()) {
		t.Error("the restart changed the bundle")
	}

	third, _ := directReconciler(t, h)
	third.now = func() time.Time { return rotation.Add(overlap + time.Second) }
	reconcileOnce(ctx, t, third)
	if !syncertest.EveryBundleIs(h.mwc(ctx), caB.Fingerprint()) {
		t.Error("the overlap recorded before the restart did not end on time")
	}
}

// objectRecorder records the objects each Event names.
type objectRecorder struct{ events []recordedEvent }

type recordedEvent struct {
	reason             string
	regarding, related client.Object
}

func (o *objectRecorder) Eventf(regarding, related runtime.Object, _, reason, _, _ string, _ ...any) {
	o.events = append(o.events, recordedEvent{reason, regarding.(client.Object), related.(client.Object)})
}

// Every Event regards the Secret and names the MutatingWebhookConfiguration
// as related; an object that was not read is named without a UID.
func TestEventsNameTheObjectsRead(t *testing.T) {
	ctx := context.Background()
	h := newEmptyHarness(t, time.Hour)
	r, _ := directReconciler(t, h)
	rec := &objectRecorder{}
	r.recorder = rec
	expect := func(t *testing.T, reason string, secretUID, mwcUID types.UID) {
		t.Helper()
		reconcileOnce(ctx, t, r)
		if len(rec.events) != 1 {
			t.Fatalf("%d Events, want one %s", len(rec.events), reason)
		}
		ev := rec.events[0]
		rec.events = nil
		if ev.reason != reason {
			t.Errorf("Event %s, want %s", ev.reason, reason)
		}
		s, m := ev.regarding, ev.related
		if s.GetNamespace() != h.cfg.SecretNamespace || s.GetName() != h.cfg.SecretName || s.GetUID() != secretUID {
			t.Errorf("regarding %s/%s (uid %q), want the Secret %s/%s (uid %q)",
				s.GetNamespace(), s.GetName(), s.GetUID(), h.cfg.SecretNamespace, h.cfg.SecretName, secretUID)
		}
		if m.GetName() != h.cfg.WebhookConfiguration || m.GetUID() != mwcUID {
			t.Errorf("related %s (uid %q), want the MutatingWebhookConfiguration %s (uid %q)",
				m.GetName(), m.GetUID(), h.cfg.WebhookConfiguration, mwcUID)
		}
	}

	t.Run("webhook_configuration_missing_names_neither_uid", func(t *testing.T) { expect(t, EventWebhookConfigNotFound, "", "") })
	mwc, err := syncertest.CreateWebhookConfiguration(ctx, h.cluster.Clientset,
		syncertest.WebhookConfiguration(h.cfg.WebhookConfiguration, "a.kim-snatch.kyma-project.io"))
	if err != nil {
		t.Fatal(err)
	}
	t.Run("secret_missing_names_the_secret_without_uid", func(t *testing.T) { expect(t, EventSourceNotFound, "", mwc.UID) })
	h.putSecret(ctx, map[string][]byte{"other": []byte("x")})
	secrets := h.cluster.Clientset.CoreV1().Secrets(h.cfg.SecretNamespace)
	secret, err := secrets.Get(ctx, h.cfg.SecretName, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Run("ca_key_missing_names_both_uids", func(t *testing.T) { expect(t, EventSourceKeyMissing, secret.UID, mwc.UID) })
}

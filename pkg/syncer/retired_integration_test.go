package syncer

import (
	"context"
	"slices"
	"testing"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/retry"

	"github.com/kyma-project/kim-snatch/pkg/certtest"
	"github.com/kyma-project/kim-snatch/pkg/syncer/syncertest"
)

// The managers and entries of the path from kim-snatch 1.0.x to KIM Snatch
// through lifecycle-manager (docs/migration.md): kim-snatch force-applies
// the whole object as snatch, lifecycle-manager force-applies its manifest
// as its applier, first with kim-snatch's entry, then with the new one.
const (
	retiredManager = "snatch"
	applierManager = "declarative.kyma-project.io/applier"
	oldEntry       = "mpod-v1.kb.io"
	newEntry       = "pods.kim-snatch.kyma-project.io"
)

// applyAsApplier applies the manifest's object with the named entries, as
// lifecycle-manager does; the manifest carries no caBundle.
func applyAsApplier(ctx context.Context, t *testing.T, h *harness, entries ...string) *admissionregistrationv1.MutatingWebhookConfiguration {
	t.Helper()
	mwc := syncertest.WebhookConfiguration(h.cfg.WebhookConfiguration, entries...)
	out, err := syncertest.ForceApply(ctx, h.cluster.Clientset, mwc, applierManager)
	if err != nil {
		t.Fatalf("apply as %s: %v", applierManager, err)
	}
	return out
}

// applyAsKimSnatch writes ca into every entry's caBundle as kim-snatch
// 1.0.x does at a certificate load: it force-applies the whole object it
// read, retrying on a conflict. Afterwards snatch owns every field.
func applyAsKimSnatch(ctx context.Context, t *testing.T, h *harness, ca []byte) *admissionregistrationv1.MutatingWebhookConfiguration {
	t.Helper()
	var out *admissionregistrationv1.MutatingWebhookConfiguration
	err := retry.RetryOnConflict(retry.DefaultBackoff, func() error {
		mwc := h.mwc(ctx)
		for i := range mwc.Webhooks {
			mwc.Webhooks[i].ClientConfig.CABundle = ca
		}
		var err error
		out, err = syncertest.ForceApply(ctx, h.cluster.Clientset, mwc, retiredManager)
		return err
	})
	if err != nil {
		t.Fatalf("apply as %s: %v", retiredManager, err)
	}
	if !syncertest.HasApplyEntry(out, retiredManager) {
		t.Fatalf("the apply of %s left no Apply entry: %v", retiredManager, managerEntries(out))
	}
	return out
}

func webhookNames(mwc *admissionregistrationv1.MutatingWebhookConfiguration) []string {
	var out []string
	for _, wh := range mwc.Webhooks {
		out = append(out, wh.Name)
	}
	return out
}

// installedByKimSnatch sets up what the syncer finds on a runtime of
// kim-snatch 1.0.x under lifecycle-manager: the Secret's CA, and the old
// entry, applied by the applier and then whole by snatch.
func installedByKimSnatch(ctx context.Context, t *testing.T, managers []string) (*harness, *certtest.Cert) {
	t.Helper()
	h := newEmptyHarness(t, time.Hour)
	h.cfg.ReleaseFieldManagers = managers
	ca := certtest.MustCA(t, certtest.Options{CommonName: "ca"})
	h.putCA(ctx, ca.CertPEM)
	applyAsApplier(ctx, t, h, oldEntry)
	applyAsKimSnatch(ctx, t, h, ca.CertPEM)
	return h, ca
}

// The outcome the release exists for: once the syncer has released snatch,
// the applier's apply without the old entry removes it. Without the
// release the entry stays, which is what the release fixes.
func TestReleaseLetsTheApplierRemoveTheRetiredWritersEntry(t *testing.T) {
	ctx := context.Background()
	tests := []struct {
		name      string
		managers  []string
		wantNames []string
	}{
		{name: "released_entry_is_removed_by_the_applier", managers: []string{retiredManager}, wantNames: []string{newEntry}},
		{name: "release_disabled_keeps_the_old_entry", wantNames: []string{oldEntry, newEntry}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h, ca := installedByKimSnatch(ctx, t, tt.managers)
			h.start()
			h.waitMWC(ctx, "a sync, and the release if enabled", func(m *admissionregistrationv1.MutatingWebhookConfiguration) bool {
				synced := m.Annotations[StateAnnotation] != ""
				return synced && (len(tt.managers) == 0 || !syncertest.HasApplyEntry(m, retiredManager))
			})

			applyAsApplier(ctx, t, h, newEntry)
			mwc := h.mwc(ctx)
			if got := webhookNames(mwc); !slices.Equal(got, tt.wantNames) {
				t.Fatalf("webhooks after the applier's apply of %s alone: %q, want %q; managedFields %v",
					newEntry, got, tt.wantNames, managerEntries(mwc))
			}
			h.waitMWC(ctx, "the CA on every entry", func(m *admissionregistrationv1.MutatingWebhookConfiguration) bool {
				return syncertest.EveryBundleIs(m, ca.Fingerprint())
			})
			h.running()
		})
	}
}

// kim-snatch may still run beside the syncer and apply again at its next
// certificate load: that apply is released too, each with one count.
func TestReleaseRemovesAnApplyAfterTheSyncerStarted(t *testing.T) {
	ctx := context.Background()
	h, ca := installedByKimSnatch(ctx, t, []string{retiredManager})
	h.start()
	released := func(m *admissionregistrationv1.MutatingWebhookConfiguration) bool {
		return m.Annotations[StateAnnotation] != "" && !syncertest.HasApplyEntry(m, retiredManager)
	}
	h.waitMWC(ctx, "the first release", released)
	h.waitMetric(ctx, "cabundle_syncer_apply_entries_released_total", 1)

	applyAsKimSnatch(ctx, t, h, ca.CertPEM)
	h.waitMWC(ctx, "the release of the later apply", released)
	h.waitMetric(ctx, "cabundle_syncer_apply_entries_released_total", 2)

	applyAsApplier(ctx, t, h, newEntry)
	if got := webhookNames(h.mwc(ctx)); !slices.Equal(got, []string{newEntry}) {
		t.Errorf("webhooks after the applier's apply of %s alone: %q, want only it", newEntry, got)
	}
	h.running()
}

// Only Apply entries of the listed managers go: the Update entries, snatch's
// included, and the Apply entries of other managers stay as they were.
func TestReleaseKeepsUpdateEntriesAndOtherManagersEntries(t *testing.T) {
	ctx := context.Background()
	h, _ := installedByKimSnatch(ctx, t, []string{retiredManager})
	label := &admissionregistrationv1.MutatingWebhookConfiguration{ObjectMeta: metav1.ObjectMeta{
		Name: h.cfg.WebhookConfiguration, Labels: map[string]string{"example.com/other": "true"}}}
	if _, err := syncertest.ForceApply(ctx, h.cluster.Clientset, label, "other-applier"); err != nil {
		t.Fatal(err)
	}
	mwcs := h.cluster.Clientset.AdmissionregistrationV1().MutatingWebhookConfigurations()
	_, err := mwcs.Patch(ctx, h.cfg.WebhookConfiguration, types.MergePatchType,
		[]byte(`{"metadata":{"labels":{"example.com/by-update":"true"}}}`), metav1.PatchOptions{FieldManager: retiredManager})
	if err != nil {
		t.Fatal(err)
	}
	before := h.mwc(ctx)
	h.start()
	after, _ := h.waitMWC(ctx, "the release", func(m *admissionregistrationv1.MutatingWebhookConfiguration) bool {
		return m.Annotations[StateAnnotation] != "" && !syncertest.HasApplyEntry(m, retiredManager)
	})

	others := func(m *admissionregistrationv1.MutatingWebhookConfiguration) []managerEntry {
		return slices.DeleteFunc(managerEntries(m), func(e managerEntry) bool {
			return e.Manager == FieldManager || e.Manager == retiredManager && e.Operation == string(metav1.ManagedFieldsOperationApply)
		})
	}
	want := others(before)
	var kinds []string
	for _, e := range want {
		kinds = append(kinds, e.Manager+"/"+e.Operation)
	}
	slices.Sort(kinds)
	wantKinds := []string{applierManager + "/Apply", "other-applier/Apply", retiredManager + "/Update"}
	if !slices.Equal(kinds, wantKinds) {
		t.Fatalf("before the release the other entries are %q, want %q", kinds, wantKinds)
	}
	if got := others(after); !slices.Equal(got, want) {
		t.Errorf("entries after the release, but the syncer's\n  %v\nwant them as they were\n  %v", got, want)
	}
	if !slices.ContainsFunc(after.ManagedFields, func(mf metav1.ManagedFieldsEntry) bool {
		return mf.Manager == FieldManager && mf.Operation == metav1.ManagedFieldsOperationUpdate
	}) {
		t.Errorf("the syncer's Update entry is gone: %v", managerEntries(after))
	}
	h.running()
}

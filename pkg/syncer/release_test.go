package syncer

import (
	"context"
	"encoding/json"
	"slices"
	"testing"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kyma-project/kim-snatch/pkg/certtest"
	"github.com/kyma-project/kim-snatch/pkg/patch"
	"github.com/kyma-project/kim-snatch/pkg/syncer/syncertest"
)

// applyAsOldSyncer writes bundle and annotation as the syncer did before it
// wrote with a JSON patch.
func applyAsOldSyncer(ctx context.Context, t *testing.T, h *harness, bundle []byte, annotation string) *admissionregistrationv1.MutatingWebhookConfiguration {
	t.Helper()
	out, err := syncertest.ApplyAsOldSyncer(ctx, h.cluster.Clientset, h.cfg.WebhookConfiguration, FieldManager, bundle, StateAnnotation, annotation)
	if err != nil {
		t.Fatalf("apply as the old syncer: %v", err)
	}
	if !hasOldApplyEntry(out) {
		t.Fatal("the old syncer's apply left no Apply entry of its manager")
	}
	return out
}

func hasOldApplyEntry(mwc *admissionregistrationv1.MutatingWebhookConfiguration) bool {
	return syncertest.HasApplyEntry(mwc, FieldManager)
}

func isOldApplyEntry(mf metav1.ManagedFieldsEntry) bool {
	return mf.Manager == FieldManager && mf.Operation == metav1.ManagedFieldsOperationApply
}

// managerEntry is what identifies a managedFields entry and what it owns.
type managerEntry struct{ Manager, Operation, APIVersion, Fields string }

func managerEntries(mwc *admissionregistrationv1.MutatingWebhookConfiguration) []managerEntry {
	var out []managerEntry
	for _, mf := range mwc.ManagedFields {
		e := managerEntry{Manager: mf.Manager, Operation: string(mf.Operation), APIVersion: mf.APIVersion}
		if mf.FieldsV1 != nil {
			e.Fields = mf.FieldsV1.GetRawString()
		}
		out = append(out, e)
	}
	return out
}

// writeAfterRead is a reader that lets another manager write the object
// right after each read, as a deployer could between the syncer's read and
// its write.
type writeAfterRead struct {
	client.Reader
	h *harness
}

func (w writeAfterRead) Get(ctx context.Context, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
	if err := w.Reader.Get(ctx, key, obj, opts...); err != nil {
		return err
	}
	mwc := w.h.mwc(ctx)
	mwc.Webhooks[0].TimeoutSeconds = ptr.To(*mwc.Webhooks[0].TimeoutSeconds + 1)
	_, err := w.h.cluster.Clientset.AdmissionregistrationV1().MutatingWebhookConfigurations().Update(ctx, mwc, metav1.UpdateOptions{FieldManager: "deployer"})
	return err
}

func TestReleaseApplyEntryRemovesOnlyTheOldSyncersEntry(t *testing.T) {
	ctx := context.Background()
	ca := certtest.MustCA(t, certtest.Options{CommonName: "ca"})
	webhooks := []string{"a.kim-snatch.kyma-project.io", "b.kim-snatch.kyma-project.io"}
	tests := []struct {
		name string
		// setup brings the object into the state to release; the harness
		// created it under syncertest.ManifestFieldManager.
		setup        func(t *testing.T, h *harness)
		wantReleased bool
		// reader wraps the reader of the release, when set.
		reader func(client.Reader, *harness) client.Reader
		// wantConflict: the release must fail with a conflict and write
		// nothing.
		wantConflict bool
	}{
		{
			name:         "old_apply_entry_among_others_is_released",
			setup:        func(t *testing.T, h *harness) { applyAsOldSyncer(ctx, t, h, ca.CertPEM, "{}") },
			wantReleased: true,
		},
		{
			// Apply, and an Update of the new syncer after it: only the
			// Apply entry goes.
			name: "old_apply_entry_beside_the_new_update_entry_is_released",
			setup: func(t *testing.T, h *harness) {
				mwc := applyAsOldSyncer(ctx, t, h, ca.CertPEM, "{}")
				r, _ := directReconciler(t, h)
				if err := patchCABundle(ctx, r, mwc, ca.CertPEM, `{"v":1,"cas":{}}`); err != nil {
					t.Fatal(err)
				}
			},
			wantReleased: true,
		},
		{
			// The syncer's entry is the only one: the release sends the
			// documented reset, a list of one empty entry.
			name: "lone_old_apply_entry_is_released",
			setup: func(t *testing.T, h *harness) {
				mwc := applyAsOldSyncer(ctx, t, h, ca.CertPEM, "{}")
				i := slices.IndexFunc(mwc.ManagedFields, isOldApplyEntry)
				only, err := json.Marshal([]patch.Operation{{Op: "replace", Path: "/metadata/managedFields", Value: mwc.ManagedFields[i : i+1]}})
				if err != nil {
					t.Fatal(err)
				}
				mwc, err = h.cluster.Clientset.AdmissionregistrationV1().MutatingWebhookConfigurations().Patch(ctx, h.cfg.WebhookConfiguration, types.JSONPatchType, only, metav1.PatchOptions{})
				if err != nil {
					t.Fatal(err)
				}
				if len(mwc.ManagedFields) != 1 || !hasOldApplyEntry(mwc) {
					t.Fatalf("managedFields %v, want only the old syncer's entry", managerEntries(mwc))
				}
			},
			wantReleased: true,
		},
		{
			name:  "no_old_apply_entry_writes_nothing",
			setup: func(*testing.T, *harness) {},
		},
		{
			name:         "change_between_read_and_write_conflicts",
			setup:        func(t *testing.T, h *harness) { applyAsOldSyncer(ctx, t, h, ca.CertPEM, "{}") },
			reader:       func(r client.Reader, h *harness) client.Reader { return writeAfterRead{Reader: r, h: h} },
			wantConflict: true,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newHarness(t, time.Hour, webhooks...)
			tt.setup(t, h)
			c, err := client.New(h.cluster.Config, client.Options{})
			if err != nil {
				t.Fatal(err)
			}
			var reader client.Reader = c
			if tt.reader != nil {
				reader = tt.reader(c, h)
			}
			before := h.mwc(ctx)

			released, err := releaseApplyEntries(ctx, reader, c, h.cfg.WebhookConfiguration, []string{FieldManager})
			after := h.mwc(ctx)
			if tt.wantConflict {
				assertStaleReleaseConflicts(t, err, before, after)
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if (len(released) > 0) != tt.wantReleased || len(released) > 0 && !slices.Equal(released, []string{FieldManager}) {
				t.Errorf("released %q, want %s: %v", released, FieldManager, tt.wantReleased)
			}
			if !tt.wantReleased && after.ResourceVersion != before.ResourceVersion {
				t.Errorf("nothing to release, but the object was written: resourceVersion %s -> %s", before.ResourceVersion, after.ResourceVersion)
			}
			assertReleasedOnlyTheApplyEntry(t, before, after)
		})
	}

	t.Run("absent_object_stays_absent", func(t *testing.T) {
		h := newEmptyHarness(t, time.Hour)
		c, err := client.New(h.cluster.Config, client.Options{})
		if err != nil {
			t.Fatal(err)
		}
		released, err := releaseApplyEntries(ctx, c, c, h.cfg.WebhookConfiguration, []string{FieldManager})
		if err != nil || len(released) > 0 {
			t.Errorf("release of an absent object = %q, %v; want nothing, nil", released, err)
		}
		if _, err := h.cluster.Clientset.AdmissionregistrationV1().MutatingWebhookConfigurations().Get(ctx, h.cfg.WebhookConfiguration, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
			t.Errorf("Get after the release = %v, want NotFound", err)
		}
	})
}

// assertStaleReleaseConflicts checks that a release based on a stale read
// failed with a conflict and wrote nothing over the other manager's write.
func assertStaleReleaseConflicts(t *testing.T, err error, before, after *admissionregistrationv1.MutatingWebhookConfiguration) {
	t.Helper()
	if !apierrors.IsConflict(err) {
		t.Fatalf("release = %v, want a conflict", err)
	}
	if !hasOldApplyEntry(after) {
		t.Error("a release based on a stale read removed the entry")
	}
	if *after.Webhooks[0].TimeoutSeconds == *before.Webhooks[0].TimeoutSeconds {
		t.Error("the other manager's write is lost")
	}
}

// assertReleasedOnlyTheApplyEntry checks that exactly the old Apply entry
// is gone; every other entry, and the object itself, are as they were.
func assertReleasedOnlyTheApplyEntry(t *testing.T, before, after *admissionregistrationv1.MutatingWebhookConfiguration) {
	t.Helper()
	var want []managerEntry
	for _, e := range managerEntries(before) {
		if e.Manager != FieldManager || e.Operation != string(metav1.ManagedFieldsOperationApply) {
			want = append(want, e)
		}
	}
	if got := managerEntries(after); !slices.Equal(got, want) {
		t.Errorf("managedFields after the release\n  %v\nwant\n  %v", got, want)
	}
	b, _ := json.Marshal(before.Webhooks)
	a, _ := json.Marshal(after.Webhooks)
	if string(a) != string(b) || after.Annotations[StateAnnotation] != before.Annotations[StateAnnotation] {
		t.Errorf("the release changed the object:\n  %s\nwas\n  %s", a, b)
	}
}

package syncer

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"time"

	"github.com/go-logr/logr"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/kyma-project/kim-snatch/pkg/logkeys"
	"github.com/kyma-project/kim-snatch/pkg/patch"
)

// releaseApplyEntry removes the managedFields entry of earlier builds
// (FieldManager, operation Apply), which an Update leaves in place, from the
// MutatingWebhookConfiguration name, and reports whether there was one; reader
// must not strip managedFields, as the cache does. Replacing managedFields is
// the documented reset of ownership (docs/operations.md); an empty list would
// leave them as they are, so the last entry goes as a list of one empty entry.
// The patch changes nothing else, which the reset would make the syncer own,
// and its resourceVersion precondition keeps an entry added after the read.
func releaseApplyEntry(ctx context.Context, reader client.Reader, c client.Client, name string) (bool, error) {
	mwc := &admissionregistrationv1.MutatingWebhookConfiguration{}
	if err := reader.Get(ctx, client.ObjectKey{Name: name}, mwc); apierrors.IsNotFound(err) {
		return false, nil
	} else if err != nil {
		return false, fmt.Errorf("read MutatingWebhookConfiguration %s: %w", name, err)
	}
	kept := slices.DeleteFunc(slices.Clone(mwc.ManagedFields), func(mf metav1.ManagedFieldsEntry) bool {
		return mf.Manager == FieldManager && mf.Operation == metav1.ManagedFieldsOperationApply
	})
	if len(kept) == len(mwc.ManagedFields) {
		return false, nil
	}
	if len(kept) == 0 {
		kept = []metav1.ManagedFieldsEntry{{}}
	}
	data, err := json.Marshal([]patch.Operation{
		{Op: "replace", Path: "/metadata/resourceVersion", Value: mwc.ResourceVersion},
		{Op: "replace", Path: "/metadata/managedFields", Value: kept},
	})
	if err != nil {
		return false, fmt.Errorf("encode managedFields of MutatingWebhookConfiguration %s: %w", name, err)
	}
	if err := c.Patch(ctx, mwc, client.RawPatch(types.JSONPatchType, data), client.FieldOwner(FieldManager)); err != nil {
		return false, fmt.Errorf("remove the %s Apply entry from the managedFields of MutatingWebhookConfiguration %s: %w", FieldManager, name, err)
	}
	return true, nil
}

// releaseApplyEntryUntilDone retries releaseApplyEntry with the controller's
// backoff until it succeeds or ctx ends: a conflict with the controller's write
// is expected, and no error here (RBAC, API server down) may stop the syncing.
func releaseApplyEntryUntilDone(ctx context.Context, reader client.Reader, c client.Client, name string, log logr.Logger) {
	backoff := retryBackoff()
	log = log.WithValues(logkeys.WebhookConfiguration, name)
	for {
		released, err := releaseApplyEntry(ctx, reader, c, name)
		if err == nil {
			if released {
				log.Info("Removed the server-side apply entry of an earlier syncer build from managedFields")
			}
			return
		}
		delay := backoff.When(reconcile.Request{})
		log.Error(err, "Releasing the field ownership of an earlier syncer build failed; retrying", logkeys.RequeueAfter, delay.String())
		select {
		case <-ctx.Done():
			return
		case <-time.After(delay):
		}
	}
}

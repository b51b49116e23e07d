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

// Messages of a released entry: of the syncer's earlier builds, and of a
// field manager of --release-field-managers.
const (
	msgReleasedEarlierBuild = "Removed the server-side apply entry of an earlier syncer build from managedFields"
	msgReleasedRetired      = "Removed the server-side apply entry of a retired field manager from managedFields"
)

// releaseApplyEntries removes the managedFields entries of managers with
// operation Apply, which an Update leaves in place, from the
// MutatingWebhookConfiguration name, and returns the managers it removed
// entries of; reader must not strip managedFields, as the cache does.
// Replacing managedFields is the documented reset of ownership
// (docs/operations.md); an empty list would leave them as they are, so the
// last entry goes as a list of one empty entry. The patch changes nothing
// else, which the reset would make the syncer own, and its resourceVersion
// precondition keeps an entry added after the read.
func releaseApplyEntries(ctx context.Context, reader client.Reader, c client.Client, name string,
	managers []string,
) ([]string, error) {
	mwc := &admissionregistrationv1.MutatingWebhookConfiguration{}
	if err := reader.Get(ctx, client.ObjectKey{Name: name}, mwc); apierrors.IsNotFound(err) {
		return nil, nil
	} else if err != nil {
		return nil, fmt.Errorf("read MutatingWebhookConfiguration %s: %w", name, err)
	}
	var released []string
	kept := slices.DeleteFunc(slices.Clone(mwc.ManagedFields), func(mf metav1.ManagedFieldsEntry) bool {
		if mf.Operation != metav1.ManagedFieldsOperationApply || !slices.Contains(managers, mf.Manager) {
			return false
		}
		if !slices.Contains(released, mf.Manager) {
			released = append(released, mf.Manager)
		}
		return true
	})
	if len(released) == 0 {
		return nil, nil
	}
	if len(kept) == 0 {
		kept = []metav1.ManagedFieldsEntry{{}}
	}
	data, err := json.Marshal([]patch.Operation{
		{Op: "replace", Path: "/metadata/resourceVersion", Value: mwc.ResourceVersion},
		{Op: "replace", Path: "/metadata/managedFields", Value: kept},
	})
	if err != nil {
		return nil, fmt.Errorf("encode managedFields of MutatingWebhookConfiguration %s: %w", name, err)
	}
	if err := c.Patch(ctx, mwc, client.RawPatch(types.JSONPatchType, data), client.FieldOwner(FieldManager)); err != nil {
		return nil, fmt.Errorf("remove the Apply entries of %q from the managedFields of MutatingWebhookConfiguration %s: %w",
			released, name, err)
	}
	return released, nil
}

// releaser releases the field ownership of writers that no longer write:
// it removes their Apply entries, and logs and counts each manager.
type releaser struct {
	reader  client.Reader // the API reader: the cache strips managedFields
	client  client.Client
	name    string // the MutatingWebhookConfiguration
	metrics *Metrics
}

// release removes the Apply entries of managers, with one read and at most
// one write.
func (r releaser) release(ctx context.Context, managers []string, log logr.Logger) error {
	released, err := releaseApplyEntries(ctx, r.reader, r.client, r.name, managers)
	for _, m := range released {
		r.metrics.ApplyEntriesReleased.Inc()
		msg := msgReleasedRetired
		if m == FieldManager {
			msg = msgReleasedEarlierBuild
		}
		log.Info(msg, logkeys.FieldManager, m)
	}
	return err
}

// releaseEarlierBuildUntilDone releases the Apply entry of the syncer's
// earlier builds, retrying with the controller's backoff until it succeeds
// or ctx ends: a conflict with the controller's write is expected, and no
// error here (RBAC, API server down) may stop the syncing.
func (r releaser) releaseEarlierBuildUntilDone(ctx context.Context, log logr.Logger) {
	backoff := retryBackoff()
	log = log.WithValues(logkeys.WebhookConfiguration, r.name)
	for {
		err := r.release(ctx, []string{FieldManager}, log)
		if err == nil {
			return
		}
		delay := backoff.When(reconcile.Request{})
		log.Error(err, "Releasing the field ownership of an earlier syncer build failed; retrying",
			logkeys.RequeueAfter, delay.String())
		select {
		case <-ctx.Done():
			return
		case <-time.After(delay):
		}
	}
}

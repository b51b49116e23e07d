package syncer

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/go-logr/logr"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/kyma-project/kim-snatch/pkg/logkeys"
)

// Earlier builds of the syncer wrote with server-side apply. Their
// managedFields entry (manager FieldManager, operation Apply) stays on the
// object after an upgrade and keeps making the syncer a co-owner of every
// webhook entry it named, which refuses a server-side deployer's rename or
// removal of that entry (see caBundlePatch). Writing with an Update does not
// remove that entry, so the syncer removes it once when it starts to lead.

// releaseApplyEntry removes the managedFields entry of FieldManager with
// operation Apply from the MutatingWebhookConfiguration name, and touches no
// other entry. It reads through reader, which must not strip managedFields
// (the cache does), and reports whether it removed anything. A missing
// object has nothing to release.
//
// Replacing metadata.managedFields with a list is how the API server lets a
// client reset ownership (docs/operations.md links the Kubernetes
// documentation). The documentation has an empty list mean "leave
// managedFields as they are", so when the syncer's entry is the only one,
// the list is one empty entry, the documented way to remove them all. The
// patch changes nothing else: a reset combined with other changes would make
// the syncer the owner of those. The resourceVersion precondition, as in
// caBundlePatch, keeps the write from dropping an entry that another
// manager added after the read.
func releaseApplyEntry(ctx context.Context, reader client.Reader, c client.Client, name string) (bool, error) {
	mwc := &admissionregistrationv1.MutatingWebhookConfiguration{}
	if err := reader.Get(ctx, client.ObjectKey{Name: name}, mwc); err != nil {
		if apierrors.IsNotFound(err) {
			return false, nil
		}
		return false, fmt.Errorf("read MutatingWebhookConfiguration %s: %w", name, err)
	}
	kept := make([]metav1.ManagedFieldsEntry, 0, len(mwc.ManagedFields))
	for _, mf := range mwc.ManagedFields {
		if mf.Manager != FieldManager || mf.Operation != metav1.ManagedFieldsOperationApply {
			kept = append(kept, mf)
		}
	}
	if len(kept) == len(mwc.ManagedFields) {
		return false, nil
	}
	if len(kept) == 0 {
		kept = []metav1.ManagedFieldsEntry{{}}
	}
	ops := []patchOp{
		{Op: "replace", Path: "/metadata/resourceVersion", Value: mwc.ResourceVersion},
		{Op: "replace", Path: "/metadata/managedFields", Value: kept},
	}
	data, err := json.Marshal(ops)
	if err != nil {
		return false, fmt.Errorf("encode managedFields of MutatingWebhookConfiguration %s: %w", name, err)
	}
	if err := c.Patch(ctx, mwc, client.RawPatch(types.JSONPatchType, data), client.FieldOwner(FieldManager)); err != nil {
		return false, fmt.Errorf("remove the %s Apply entry from the managedFields of MutatingWebhookConfiguration %s: %w", FieldManager, name, err)
	}
	return true, nil
}

// applyEntryRelease runs releaseApplyEntry on the leader, once it succeeds,
// retrying with the controller's backoff: a conflict with a write of the
// controller itself is expected, and any other error (RBAC, an unreachable
// API server) must not stop the syncer, whose main job does not depend on it.
type applyEntryRelease struct {
	reader client.Reader
	client client.Client
	name   string
	log    logr.Logger
}

var (
	_ manager.Runnable               = (*applyEntryRelease)(nil)
	_ manager.LeaderElectionRunnable = (*applyEntryRelease)(nil)
)

func (a *applyEntryRelease) Start(ctx context.Context) error {
	backoff := retryBackoff()
	key := reconcile.Request{}
	log := a.log.WithValues(logkeys.WebhookConfiguration, a.name)
	for {
		released, err := releaseApplyEntry(ctx, a.reader, a.client, a.name)
		if err == nil {
			if released {
				log.Info("Removed the server-side apply entry of an earlier syncer build from managedFields")
			}
			return nil
		}
		delay := backoff.When(key)
		log.Error(err, "Releasing the field ownership of an earlier syncer build failed; retrying", logkeys.RequeueAfter, delay.String())
		timer := time.NewTimer(delay)
		select {
		case <-ctx.Done():
			timer.Stop()
			return nil
		case <-timer.C:
		}
	}
}

func (a *applyEntryRelease) NeedLeaderElection() bool { return true }

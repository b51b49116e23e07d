package syncer

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kyma-project/kim-snatch/pkg/cabundle"
)

// patchOp is one operation of a JSON patch (RFC 6902).
type patchOp struct {
	Op    string `json:"op"`
	Path  string `json:"path"`
	Value any    `json:"value"`
}

// caBundlePatch returns the JSON patch that sets the caBundle of every
// webhook entry that does not hold bundle yet, and the state annotation when
// it differs, on the object mwc was read as. It names nothing else, so the
// write can never reset a field of whoever applies the manifests.
//
// Why a JSON patch, an Update, and not server-side apply: the managedFields
// of an Update record only the leaves it changed, so the syncer owns
// webhooks[*].clientConfig.caBundle and the annotation, and nothing that
// keeps an entry alive. An apply has to name each entry by its key, which
// makes the applier a co-owner of the entry; a deployer that applies
// server-side and renames or removes the entry is then refused, even with
// force, because the entry would be left as {name, caBundle}, which fails
// validation.
//
// Why the first operation replaces metadata.resourceVersion with the value
// that was read: the API server then updates only if the object is still at
// that version and answers 409 Conflict otherwise (a JSON patch `test` on the
// same path fails as 422 Invalid instead, which cannot be told from a patch
// that is wrong). The precondition does two jobs:
//   - The merge reads the previous CAs from the caBundles in place, so a
//     write based on a stale read could drop a CA that another write added.
//   - The entries are addressed by index. Between the read and the write a
//     deployer may reorder, rename or remove entries; without the
//     precondition /webhooks/0 could then be another entry than the one the
//     bundle was compared with, or past the end. With it, every index refers
//     to exactly the list that was read.
//
// A patch never creates an object: when the object was deleted in between,
// the API server answers 404, and a re-created object has another
// resourceVersion.
func caBundlePatch(mwc *admissionregistrationv1.MutatingWebhookConfiguration, bundle []byte, annotation string) []byte {
	ops := []patchOp{{Op: "replace", Path: "/metadata/resourceVersion", Value: mwc.ResourceVersion}}
	for i, wh := range mwc.Webhooks {
		if !cabundle.Equal(wh.ClientConfig.CABundle, bundle) {
			// "add" sets a member of an object whether it exists or not.
			ops = append(ops, patchOp{Op: "add", Path: "/webhooks/" + strconv.Itoa(i) + "/clientConfig/caBundle", Value: bundle})
		}
	}
	if old, ok := mwc.Annotations[StateAnnotation]; !ok || old != annotation {
		if mwc.Annotations == nil {
			ops = append(ops, patchOp{Op: "add", Path: "/metadata/annotations", Value: map[string]string{StateAnnotation: annotation}})
		} else {
			ops = append(ops, patchOp{Op: "add", Path: "/metadata/annotations/" + escapePointer(StateAnnotation), Value: annotation})
		}
	}
	// Strings, bytes and a map of strings cannot fail to marshal.
	b, _ := json.Marshal(ops)
	return b
}

// escapePointer escapes a key for a JSON pointer (RFC 6901).
func escapePointer(key string) string {
	return strings.NewReplacer("~", "~0", "/", "~1").Replace(key)
}

// apply writes the bundle and the annotation as a JSON patch under the
// syncer's field manager, see caBundlePatch.
//
// A failed write returns the reason label to count and log it under.
func (r *Reconciler) apply(ctx context.Context, secret *corev1.Secret, mwc *admissionregistrationv1.MutatingWebhookConfiguration, bundle []byte, annotation string) (string, error) {
	patch := client.RawPatch(types.JSONPatchType, caBundlePatch(mwc, bundle, annotation))
	err := r.client.Patch(ctx, mwc.DeepCopy(), patch, client.FieldOwner(FieldManager))
	switch {
	case err == nil:
		return "", nil
	case apierrors.IsConflict(err), apierrors.IsNotFound(err):
		// The object changed or went away since the cache was read. The
		// watch event that says so is on its way; retry on fresh data.
		return ReasonApplyConflict, fmt.Errorf("write caBundle to MutatingWebhookConfiguration %s (changed during the write; retrying): %w", mwc.Name, err)
	default:
		r.event(secret, mwc, corev1.EventTypeWarning, EventCABundleApplyFailed,
			"Writing the caBundle failed, the caBundle in place is kept: %v", err)
		return ReasonApplyFailed, fmt.Errorf("write caBundle to MutatingWebhookConfiguration %s: %w", mwc.Name, err)
	}
}

package syncer

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/go-logr/logr"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	admissionregistrationv1ac "k8s.io/client-go/applyconfigurations/admissionregistration/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kyma-project/kim-snatch/pkg/logkeys"
)

// applyConfiguration carries exactly what the syncer owns: the name of each
// webhook entry (the key of the list, needed to address the entry), its
// caBundle, and the state annotation. Everything else in the object belongs
// to whoever applies the manifests, and is absent here so that the syncer can
// never reset or claim it.
//
// The UID and resourceVersion of the object the merge was computed from
// make the write conditional. The merge reads the previous CAs from the
// caBundle in place, so a write based on a stale cache could drop a CA that
// another write added; with the resourceVersion such a write fails with a
// conflict and is retried on fresh data. The UID means the apply can never
// create the object: when the MutatingWebhookConfiguration was deleted
// between read and write, the API server answers "uid mismatch ... no
// existing object was found" instead of creating one that holds nothing but
// caBundles. (An apply that creates ignores the resourceVersion; without the
// UID only validation of the webhook entries would stand in the way.)
func applyConfiguration(mwc *admissionregistrationv1.MutatingWebhookConfiguration, bundle []byte, annotation string) *admissionregistrationv1ac.MutatingWebhookConfigurationApplyConfiguration {
	ac := admissionregistrationv1ac.MutatingWebhookConfiguration(mwc.Name).
		WithUID(mwc.UID).
		WithResourceVersion(mwc.ResourceVersion).
		WithAnnotations(map[string]string{StateAnnotation: annotation})
	for _, wh := range mwc.Webhooks {
		ac.WithWebhooks(admissionregistrationv1ac.MutatingWebhook().
			WithName(wh.Name).
			WithClientConfig(admissionregistrationv1ac.WebhookClientConfig().WithCABundle(bundle...)))
	}
	return ac
}

// apply writes the bundle with server-side apply.
//
// Ownership: the first apply does not force. The caBundle is the syncer's
// field by design, but another manager may hold it: the previous kim-snatch
// applied the whole object with force, and a `kubectl edit` or a manifest
// that sets caBundle makes its manager an owner. Server-side apply then
// answers with a conflict that names the manager. Only in that case does the
// syncer apply again with force, after a Warning Event and a log line that
// name the other manager, so that two writers fighting over the field are
// visible rather than silent. Force is safe here because it only ever
// applies to the fields in applyConfiguration: the caBundles and the state
// annotation. It cannot take rules, selectors, failurePolicy or any other
// field from their owner.
//
// A failed apply returns the reason label to count and log it under.
func (r *Reconciler) apply(ctx context.Context, log logr.Logger, secret *corev1.Secret, mwc *admissionregistrationv1.MutatingWebhookConfiguration, bundle []byte, annotation string) (string, error) {
	ac := applyConfiguration(mwc, bundle, annotation)
	err := r.client.Apply(ctx, ac, client.FieldOwner(FieldManager))
	if conflicts := fieldManagerConflicts(err); len(conflicts) > 0 {
		r.count(ReasonFieldOwnershipConflict)
		log.Info("Taking ownership of the caBundle from another field manager", logkeys.Reason, ReasonFieldOwnershipConflict, logkeys.Conflicts, conflicts)
		r.event(secret, mwc, corev1.EventTypeWarning, EventCABundleOwnershipTaken,
			"Another field manager held the caBundle; %s takes it back: %s", FieldManager, strings.Join(conflicts, "; "))
		err = r.client.Apply(ctx, ac, client.FieldOwner(FieldManager), client.ForceOwnership)
	}
	switch {
	case err == nil:
		return "", nil
	case apierrors.IsConflict(err), apierrors.IsNotFound(err):
		// The object changed or went away since the cache was read. The
		// watch event that says so is on its way; retry on fresh data.
		return ReasonApplyConflict, fmt.Errorf("apply caBundle to MutatingWebhookConfiguration %s (changed during the write; retrying): %w", mwc.Name, err)
	default:
		r.event(secret, mwc, corev1.EventTypeWarning, EventCABundleApplyFailed,
			"Writing the caBundle failed, the caBundle in place is kept: %v", err)
		return ReasonApplyFailed, fmt.Errorf("apply caBundle to MutatingWebhookConfiguration %s: %w", mwc.Name, err)
	}
}

// fieldManagerConflicts returns the conflicts of a server-side apply that
// failed because other managers own fields it sets, or nothing for any other
// error, including a failed resourceVersion precondition.
func fieldManagerConflicts(err error) []string {
	var status apierrors.APIStatus
	if err == nil || !errors.As(err, &status) {
		return nil
	}
	st := status.Status()
	if st.Reason != metav1.StatusReasonConflict || st.Details == nil {
		return nil
	}
	var out []string
	for _, c := range st.Details.Causes {
		if c.Type == metav1.CauseTypeFieldManagerConflict {
			out = append(out, c.Message)
		}
	}
	return out
}

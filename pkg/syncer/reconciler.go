package syncer

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/go-logr/logr"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/events"
	"sigs.k8s.io/controller-runtime/pkg/client"
	logf "sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/kyma-project/kim-snatch/pkg/cabundle"
	"github.com/kyma-project/kim-snatch/pkg/logkeys"
	"github.com/kyma-project/kim-snatch/pkg/patch"
)

// Event reasons, one per failure, as the events API folds Events of one
// reason into one series. Every Event regards the Secret, beside which one
// Role allows them, and names the MutatingWebhookConfiguration as related.
const (
	EventSourceNotFound        = "SourceNotFound"
	EventSourceKeyMissing      = "SourceKeyMissing"
	EventSourceEmpty           = "SourceEmpty"
	EventSourceUnparsable      = "SourceUnparsable"
	EventSourceNotCA           = "SourceNotCA"
	EventSourceExpired         = "SourceExpired"
	EventSourceNotIssuer       = "SourceNotIssuer"
	EventWebhookConfigNotFound = "WebhookConfigurationNotFound"
	EventCABundleUpdated       = "CABundleUpdated"
	EventCABundleApplyFailed   = "CABundleApplyFailed"
)

// Outcomes of a sync (logkeys.Outcome), each with the message of the line
// that ends it (docs/operations.md, "Logs"). Every message starts with
// "caBundle", so `grep caBundle` finds every sync.
const (
	OutcomeWritten, MsgWritten             = "written", "caBundle written"
	OutcomeStateRecorded, MsgStateRecorded = "state-recorded", "caBundle unchanged, overlap state written"
	OutcomeUnchanged, MsgUnchanged         = "unchanged", "caBundle unchanged"
	OutcomeRefused, MsgRefused             = "refused", "caBundle not written"
	OutcomeError, MsgFailed                = "error", "caBundle sync failed"
)

// eventAction is the action of every Event, as the events API requires one.
const eventAction = "SyncCABundle"

// Reconciler keeps webhooks[*].clientConfig.caBundle of one
// MutatingWebhookConfiguration in step with the CA in one Secret. Every
// request means the same thing, "look again", so it ignores the request.
type Reconciler struct {
	client   client.Client
	recorder events.EventRecorder
	metrics  *Metrics
	cfg      Config
	now      func() time.Time // the clock of the merge
	// disabledLogged is the resourceVersion of the emergency-disable
	// marker whose disable was last logged at info level, empty when the
	// last sync was not under a disable.
	disabledLogged string
}

var _ reconcile.Reconciler = (*Reconciler)(nil)

// NewReconciler returns a reconciler that reads and writes through c, which
// should be backed by the cache from CacheOptions.
func NewReconciler(c client.Client, recorder events.EventRecorder, m *Metrics, cfg Config) *Reconciler {
	return &Reconciler{client: c, recorder: recorder, metrics: m, cfg: cfg, now: time.Now}
}

// Reconcile reads both objects, merges, and writes what differs. A missing
// object or an invalid source is reported, not retried: only a change to a
// watched object can fix it. Read and write errors are retried with backoff.
func (r *Reconciler) Reconcile(ctx context.Context, _ reconcile.Request) (reconcile.Result, error) {
	log := logf.FromContext(ctx).WithValues(
		logkeys.Secret, r.cfg.SecretNamespace+"/"+r.cfg.SecretName,
		logkeys.WebhookConfiguration, r.cfg.WebhookConfiguration)
	in, end := r.read(ctx)
	if end == nil {
		end = r.mergeAndWrite(ctx, in)
	}
	return r.report(log, in, end)
}

// syncInput is what a sync reads: both objects, each nil until read, and
// the emergency-disable marker, read only when the MWC is missing.
type syncInput struct {
	mwc    *admissionregistrationv1.MutatingWebhookConfiguration
	secret *corev1.Secret
	marker *corev1.ConfigMap
}

// ending is how a sync ended. The steps of Reconcile return it and report
// turns it into the metrics, the log line and the Event, in one place.
type ending struct {
	outcome, msg   string // the log line's logkeys.Outcome and message
	reason, detail string // why nothing was written: the error count's label and a sentence
	err            error  // a read or a write that failed, to retry
	// The Event; none when eventReason is empty.
	eventType, eventReason, eventText string
	invalidSource                     bool
	merged                            *cabundle.Result // the merge of a valid source
	stateErr                          error            // the overlap state could not be read, and was ignored
}

// read gets both objects, or the ending of a sync that cannot go on.
func (r *Reconciler) read(ctx context.Context) (in syncInput, end *ending) {
	mwc, secret := &admissionregistrationv1.MutatingWebhookConfiguration{}, &corev1.Secret{}
	if err := r.client.Get(ctx, client.ObjectKey{Name: r.cfg.WebhookConfiguration}, mwc); apierrors.IsNotFound(err) {
		return r.readMarker(ctx)
	} else if err != nil {
		return in, failed(ReasonReadFailed, fmt.Errorf("read MutatingWebhookConfiguration %s: %w", r.cfg.WebhookConfiguration, err))
	}
	in.mwc = mwc
	if err := r.client.Get(ctx, client.ObjectKey{Namespace: r.cfg.SecretNamespace, Name: r.cfg.SecretName}, secret); apierrors.IsNotFound(err) {
		return in, r.refuse(ReasonSecretNotFound, EventSourceNotFound,
			fmt.Sprintf("Secret %s/%s not found", r.cfg.SecretNamespace, r.cfg.SecretName))
	} else if err != nil {
		return in, failed(ReasonReadFailed, fmt.Errorf("read Secret %s/%s: %w", r.cfg.SecretNamespace, r.cfg.SecretName, err))
	}
	in.secret = secret
	if _, ok := secret.Data[r.cfg.CAKey]; !ok {
		return in, r.refuse(ReasonCAKeyMissing, EventSourceKeyMissing,
			fmt.Sprintf("Secret %s/%s has no key %q", secret.Namespace, secret.Name, r.cfg.CAKey))
	}
	return in, nil
}

// readMarker tells a deleted MutatingWebhookConfiguration under the
// emergency disable, which the marker says, from one that is missing.
func (r *Reconciler) readMarker(ctx context.Context) (in syncInput, end *ending) {
	marker := &corev1.ConfigMap{}
	err := r.client.Get(ctx, client.ObjectKey{Namespace: r.cfg.SecretNamespace, Name: EmergencyDisableName}, marker)
	switch {
	case err == nil:
		in.marker = marker
		return in, disabledEnding()
	case !apierrors.IsNotFound(err):
		return in, failed(ReasonReadFailed, fmt.Errorf("read ConfigMap %s/%s: %w",
			r.cfg.SecretNamespace, EmergencyDisableName, err))
	}
	return in, &ending{outcome: OutcomeRefused, reason: ReasonWebhookConfigNotFound,
		detail:    "the MutatingWebhookConfiguration does not exist; the syncer never creates it and waits for it",
		eventType: corev1.EventTypeWarning, eventReason: EventWebhookConfigNotFound,
		eventText: fmt.Sprintf("MutatingWebhookConfiguration %s not found; the syncer never creates it and waits for it",
			r.cfg.WebhookConfiguration)}
}

func (r *Reconciler) mergeAndWrite(ctx context.Context, in syncInput) *ending {
	state, stateErr := decodeState(in.mwc.Annotations[StateAnnotation])
	current := make([][]byte, 0, len(in.mwc.Webhooks))
	for _, wh := range in.mwc.Webhooks {
		current = append(current, wh.ClientConfig.CABundle)
	}
	res := cabundle.Merge(cabundle.Input{
		Source: in.secret.Data[r.cfg.CAKey], Serving: in.secret.Data[corev1.TLSCertKey],
		Current: current, State: state, Overlap: r.cfg.Overlap, Now: r.now()})
	var end *ending
	if res.Verdict.Valid() {
		end = r.write(ctx, in, res)
		end.merged = &res
	} else {
		end = r.refuse(string(res.Verdict.Reason), sourceEventReasons[res.Verdict.Reason],
			fmt.Sprintf("Secret %s/%s key %q: %s", in.secret.Namespace, in.secret.Name, r.cfg.CAKey, res.Verdict.Message))
	}
	end.stateErr = stateErr
	return end
}

// write patches what differs from the merge. Comparing first keeps the
// syncer from writing, and so from waking itself up, when nothing changed.
func (r *Reconciler) write(ctx context.Context, in syncInput, res cabundle.Result) *ending {
	annotation := encodeState(res.State)
	bundleInPlace := !slices.ContainsFunc(in.mwc.Webhooks, func(wh admissionregistrationv1.MutatingWebhook) bool {
		return !cabundle.Equal(wh.ClientConfig.CABundle, res.Bundle)
	})
	if len(in.mwc.Webhooks) == 0 || bundleInPlace && in.mwc.Annotations[StateAnnotation] == annotation {
		return &ending{outcome: OutcomeUnchanged, msg: MsgUnchanged}
	}
	patch := client.RawPatch(types.JSONPatchType, caBundlePatch(in.mwc, res.Bundle, annotation))
	err := r.client.Patch(ctx, in.mwc.DeepCopy(), patch, client.FieldOwner(FieldManager))
	switch {
	case apierrors.IsConflict(err) || apierrors.IsNotFound(err):
		// The watch event of the change is on its way; the retry reads fresh data.
		return failed(ReasonApplyConflict, fmt.Errorf(
			"write caBundle to MutatingWebhookConfiguration %s (changed during the write; retrying): %w", in.mwc.Name, err))
	case err != nil:
		end := failed(ReasonApplyFailed, fmt.Errorf("write caBundle to MutatingWebhookConfiguration %s: %w", in.mwc.Name, err))
		end.eventType, end.eventReason = corev1.EventTypeWarning, EventCABundleApplyFailed
		end.eventText = fmt.Sprintf("Writing the caBundle failed, the caBundle in place is kept: %v", err)
		return end
	}
	if bundleInPlace {
		// Only the overlap state changed, e.g. on a bundle another tool wrote.
		return &ending{outcome: OutcomeStateRecorded, msg: MsgStateRecorded}
	}
	return &ending{outcome: OutcomeWritten, msg: MsgWritten,
		eventType: corev1.EventTypeNormal, eventReason: EventCABundleUpdated,
		eventText: fmt.Sprintf("caBundle of %d webhook(s) set to %d CA(s) from Secret %s/%s",
			len(in.mwc.Webhooks), len(res.Certificates), in.secret.Namespace, in.secret.Name)}
}

// caBundlePatch returns the JSON patch that sets bundle in every webhook entry
// that lacks it and the state annotation when it differs, if mwc is still at
// its resourceVersion. Naming nothing else, it resets no field of a deployer
// (docs/architecture.md, "Decision: a JSON patch, not server-side apply").
func caBundlePatch(mwc *admissionregistrationv1.MutatingWebhookConfiguration, bundle []byte, annotation string) []byte {
	ops := []patch.Operation{{Op: "replace", Path: "/metadata/resourceVersion", Value: mwc.ResourceVersion}}
	for i, wh := range mwc.Webhooks {
		if !cabundle.Equal(wh.ClientConfig.CABundle, bundle) {
			// "add" sets a member of an object whether it exists or not.
			ops = append(ops, patch.Operation{Op: "add", Path: "/webhooks/" + strconv.Itoa(i) + "/clientConfig/caBundle", Value: bundle})
		}
	}
	if mwc.Annotations[StateAnnotation] != annotation {
		if mwc.Annotations == nil {
			ops = append(ops, patch.Operation{Op: "add", Path: "/metadata/annotations", Value: map[string]string{StateAnnotation: annotation}})
		} else {
			ops = append(ops, patch.Operation{Op: "add", Path: "/metadata/annotations/" + escapePointer(StateAnnotation), Value: annotation})
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

// refuse is the ending of a source that must not be written, not retried:
// the caBundle in place is the last good one, and stays.
func (r *Reconciler) refuse(reason, eventReason, msg string) *ending {
	return &ending{outcome: OutcomeRefused, reason: reason, detail: msg, invalidSource: true,
		eventType: corev1.EventTypeWarning, eventReason: eventReason,
		eventText: fmt.Sprintf("%s; the caBundle of MutatingWebhookConfiguration %s is left as it is", msg, r.cfg.WebhookConfiguration)}
}

// failed is the ending of a read or write that failed, to retry with backoff.
func failed(reason string, err error) *ending {
	return &ending{outcome: OutcomeError, msg: MsgFailed, reason: reason, err: err}
}

// report sets the metrics, logs the one line that ends the sync, records
// the Event, and returns what the workqueue does next.
func (r *Reconciler) report(log logr.Logger, in syncInput, end *ending) (reconcile.Result, error) {
	if end.stateErr != nil {
		r.metrics.Errors.WithLabelValues(ReasonStateInvalid).Inc()
		log.Error(end.stateErr, "Ignoring the overlap state", logkeys.Reason, ReasonStateInvalid)
	}
	r.setMetrics(end)
	if end.merged != nil {
		fingerprints := make([]string, len(end.merged.Certificates))
		for i, c := range end.merged.Certificates {
			fingerprints[i] = cabundle.Fingerprint(c)
		}
		log = log.WithValues(logkeys.Certificates, len(end.merged.Certificates), logkeys.Fingerprints, fingerprints,
			logkeys.RequeueAfter, end.merged.RequeueAfter.String())
	}
	if end.eventReason != "" { // an object not read is named without a UID
		secret := cmp.Or(in.secret, &corev1.Secret{
			ObjectMeta: metav1.ObjectMeta{Namespace: r.cfg.SecretNamespace, Name: r.cfg.SecretName}})
		mwc := cmp.Or(in.mwc, &admissionregistrationv1.MutatingWebhookConfiguration{
			ObjectMeta: metav1.ObjectMeta{Name: r.cfg.WebhookConfiguration}})
		r.recorder.Eventf(secret, mwc, end.eventType, end.eventReason, eventAction, "%s", end.eventText)
	}
	if end.outcome != OutcomeDisabled {
		r.disabledLogged = ""
	}
	switch end.outcome {
	case OutcomeDisabled:
		r.logDisabled(log, in.marker)
		return reconcile.Result{}, nil
	case OutcomeError:
		log.Error(end.err, MsgFailed, logkeys.Outcome, OutcomeError, logkeys.Reason, end.reason)
		return reconcile.Result{}, end.err
	case OutcomeRefused:
		log.Info(MsgRefused, logkeys.Outcome, OutcomeRefused, logkeys.Reason, end.reason, logkeys.Detail, end.detail)
		return reconcile.Result{}, nil
	case OutcomeWritten:
		log.Info(MsgWritten, logkeys.Outcome, OutcomeWritten, logkeys.Webhooks, len(in.mwc.Webhooks))
	default:
		log.Info(end.msg, logkeys.Outcome, end.outcome)
	}
	return reconcile.Result{RequeueAfter: end.merged.RequeueAfter}, nil
}

func (r *Reconciler) setMetrics(end *ending) {
	switch {
	case end.merged != nil:
		r.metrics.SourceValid.Set(1)
		r.metrics.CANotAfter.Set(float64(end.merged.NotAfter.Unix()))
		r.metrics.BundleCertificates.Set(float64(len(end.merged.Certificates)))
	case end.invalidSource:
		r.metrics.SourceValid.Set(0)
	}
	switch {
	case end.outcome == OutcomeError && end.merged == nil:
		// A read failed: nothing new is known about the caBundle.
	case end.outcome == OutcomeError || end.outcome == OutcomeRefused || end.outcome == OutcomeDisabled:
		r.metrics.InSync.Set(0)
	default:
		r.metrics.InSync.Set(1)
	}
	if end.outcome == OutcomeWritten || end.outcome == OutcomeStateRecorded {
		r.metrics.Updates.Inc()
	}
	if end.reason != "" {
		r.metrics.Errors.WithLabelValues(end.reason).Inc()
	}
}

// sourceEventReasons maps every reason of an invalid source to its Event.
var sourceEventReasons = map[cabundle.Reason]string{
	cabundle.ReasonEmpty:      EventSourceEmpty,
	cabundle.ReasonUnparsable: EventSourceUnparsable,
	cabundle.ReasonNotCA:      EventSourceNotCA,
	cabundle.ReasonExpired:    EventSourceExpired,
	cabundle.ReasonNotIssuer:  EventSourceNotIssuer,
}

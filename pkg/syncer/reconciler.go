package syncer

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/go-logr/logr"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/events"
	"sigs.k8s.io/controller-runtime/pkg/client"
	logf "sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/kyma-project/kim-snatch/pkg/cabundle"
	"github.com/kyma-project/kim-snatch/pkg/logkeys"
)

// Event reasons, one per failure: the events API folds Events with the same
// reason on the same object into one series that keeps only the first note.
//
// Every Event regards the Secret and names the MutatingWebhookConfiguration as
// the related object. Events regarding the cluster-scoped object would land in
// the namespace "default", needing RBAC there and moved by a kustomize
// namespace override; this way they are all next to the Secret, with one Role.
const (
	EventSourceNotFound        = "SourceNotFound"
	EventSourceKeyMissing      = "SourceKeyMissing"
	EventSourceEmpty           = "SourceEmpty"
	EventSourceUnparsable      = "SourceUnparsable"
	EventSourceNotCA           = "SourceNotCA"
	EventSourceExpired         = "SourceExpired"
	EventWebhookConfigNotFound = "WebhookConfigurationNotFound"
	EventCABundleUpdated       = "CABundleUpdated"
	EventCABundleApplyFailed   = "CABundleApplyFailed"
)

// Messages of the one line that ends every sync, each with its
// logkeys.Outcome. All start with "caBundle", so `grep caBundle` finds every
// sync. Every line carries logkeys.Secret and logkeys.WebhookConfiguration; a
// sync that built a bundle adds logkeys.Certificates, logkeys.Fingerprints and
// logkeys.RequeueAfter; one that did not write adds logkeys.Reason, the
// reason label of cabundle_syncer_errors_total.
const (
	MsgWritten       = "caBundle written"                          // OutcomeWritten
	MsgStateRecorded = "caBundle unchanged, overlap state written" // OutcomeStateRecorded: only the annotation changed
	MsgUnchanged     = "caBundle unchanged"                        // OutcomeUnchanged: nothing to write
	MsgRefused       = "caBundle not written"                      // OutcomeRefused: not retried, see Reconcile
	MsgFailed        = "caBundle sync failed"                      // OutcomeError, at error level: retried, see Reconcile
)

// Outcomes of a sync, the values of logkeys.Outcome.
const (
	OutcomeWritten       = "written"
	OutcomeStateRecorded = "state-recorded"
	OutcomeUnchanged     = "unchanged"
	OutcomeRefused       = "refused"
	OutcomeError         = "error"
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
	now      func() time.Time
}

var _ reconcile.Reconciler = (*Reconciler)(nil)

// NewReconciler returns a reconciler that reads and writes through c, which
// should be backed by the cache from CacheOptions. now is the clock of the
// merge; nil means time.Now.
func NewReconciler(c client.Client, recorder events.EventRecorder, m *Metrics, cfg Config, now func() time.Time) *Reconciler {
	if now == nil {
		now = time.Now
	}
	return &Reconciler{client: c, recorder: recorder, metrics: m, cfg: cfg, now: now}
}

// Reconcile reads the Secret and the MutatingWebhookConfiguration, merges,
// and writes when the result differs from what is in place.
//
// Error policy: a missing object or an invalid source is reported (Event,
// metric, log) and not retried, because only a change to one of the two
// watched objects can fix it, and that change triggers a new reconcile. Read
// and write errors are returned, so the workqueue retries with backoff. In
// every failure the caBundle in place stays as it is.
func (r *Reconciler) Reconcile(ctx context.Context, _ reconcile.Request) (reconcile.Result, error) {
	log := logf.FromContext(ctx).WithValues(
		logkeys.Secret, r.cfg.SecretNamespace+"/"+r.cfg.SecretName,
		logkeys.WebhookConfiguration, r.cfg.WebhookConfiguration)

	mwc := &admissionregistrationv1.MutatingWebhookConfiguration{}
	if err := r.client.Get(ctx, client.ObjectKey{Name: r.cfg.WebhookConfiguration}, mwc); err != nil {
		if apierrors.IsNotFound(err) {
			r.metrics.InSync.Set(0)
			r.count(ReasonWebhookConfigNotFound)
			log.Info(MsgRefused, logkeys.Outcome, OutcomeRefused, logkeys.Reason, ReasonWebhookConfigNotFound,
				logkeys.Detail, "the MutatingWebhookConfiguration does not exist; the syncer never creates it and waits for it")
			r.event(nil, nil, corev1.EventTypeWarning, EventWebhookConfigNotFound,
				"MutatingWebhookConfiguration %s not found; the syncer never creates it and waits for it", r.cfg.WebhookConfiguration)
			return reconcile.Result{}, nil
		}
		return r.failed(log, ReasonReadFailed, fmt.Errorf("read MutatingWebhookConfiguration %s: %w", r.cfg.WebhookConfiguration, err))
	}

	secret := &corev1.Secret{}
	if err := r.client.Get(ctx, client.ObjectKey{Namespace: r.cfg.SecretNamespace, Name: r.cfg.SecretName}, secret); err != nil {
		if apierrors.IsNotFound(err) {
			return r.invalidSource(log, nil, mwc, ReasonSecretNotFound, EventSourceNotFound,
				fmt.Sprintf("Secret %s/%s not found", r.cfg.SecretNamespace, r.cfg.SecretName))
		}
		return r.failed(log, ReasonReadFailed, fmt.Errorf("read Secret %s/%s: %w", r.cfg.SecretNamespace, r.cfg.SecretName, err))
	}
	source, ok := secret.Data[r.cfg.CAKey]
	if !ok {
		return r.invalidSource(log, secret, mwc, ReasonCAKeyMissing, EventSourceKeyMissing,
			fmt.Sprintf("Secret %s/%s has no key %q", secret.Namespace, secret.Name, r.cfg.CAKey))
	}

	state, err := decodeState(mwc.Annotations[StateAnnotation])
	if err != nil {
		// Every previous CA then starts a full overlap
		// (docs/architecture.md, "The overlap-state annotation").
		r.count(ReasonStateInvalid)
		log.Error(err, "Ignoring the overlap state", logkeys.Reason, ReasonStateInvalid)
	}
	current := make([][]byte, 0, len(mwc.Webhooks))
	for _, wh := range mwc.Webhooks {
		current = append(current, wh.ClientConfig.CABundle)
	}
	res := cabundle.Merge(cabundle.Input{Source: source, Current: current, State: state, Overlap: r.cfg.Overlap, Now: r.now()})
	if !res.Verdict.Valid() {
		return r.invalidSource(log, secret, mwc, string(res.Verdict.Reason), sourceEventReasons[res.Verdict.Reason],
			fmt.Sprintf("Secret %s/%s key %q: %s", secret.Namespace, secret.Name, r.cfg.CAKey, res.Verdict.Message))
	}
	r.metrics.SourceValid.Set(1)
	r.metrics.CANotAfter.Set(float64(res.NotAfter.Unix()))
	r.metrics.BundleCertificates.Set(float64(len(res.Certificates)))

	fingerprints := make([]string, len(res.Certificates))
	for i, c := range res.Certificates {
		fingerprints[i] = cabundle.Fingerprint(c)
	}
	log = log.WithValues(logkeys.Certificates, len(res.Certificates), logkeys.Fingerprints, fingerprints,
		logkeys.RequeueAfter, res.RequeueAfter.String())

	annotation := encodeState(res.State)
	bundleInPlace := !slices.ContainsFunc(mwc.Webhooks, func(wh admissionregistrationv1.MutatingWebhook) bool {
		return !cabundle.Equal(wh.ClientConfig.CABundle, res.Bundle)
	})
	if len(mwc.Webhooks) == 0 || bundleInPlace && mwc.Annotations[StateAnnotation] == annotation {
		// Comparing first is what keeps the syncer from writing, and so
		// from waking itself up, when nothing changed.
		r.metrics.InSync.Set(1)
		log.Info(MsgUnchanged, logkeys.Outcome, OutcomeUnchanged)
		return reconcile.Result{RequeueAfter: res.RequeueAfter}, nil
	}
	if reason, err := r.apply(ctx, secret, mwc, res.Bundle, annotation); err != nil {
		r.metrics.InSync.Set(0)
		return r.failed(log, reason, err)
	}
	r.metrics.Updates.Inc()
	r.metrics.InSync.Set(1)
	if bundleInPlace {
		// Only the overlap state changed, e.g. on the first run against a
		// bundle written by another tool.
		log.Info(MsgStateRecorded, logkeys.Outcome, OutcomeStateRecorded)
		return reconcile.Result{RequeueAfter: res.RequeueAfter}, nil
	}
	log.Info(MsgWritten, logkeys.Outcome, OutcomeWritten, logkeys.Webhooks, len(mwc.Webhooks))
	r.event(secret, mwc, corev1.EventTypeNormal, EventCABundleUpdated,
		"caBundle of %d webhook(s) set to %d CA(s) from Secret %s/%s", len(mwc.Webhooks), len(res.Certificates), secret.Namespace, secret.Name)
	return reconcile.Result{RequeueAfter: res.RequeueAfter}, nil
}

// invalidSource reports a source that must not be written and ends the sync
// without a retry. The caBundle in place is the last good one; leaving it
// alone is the whole point.
func (r *Reconciler) invalidSource(log logr.Logger, secret *corev1.Secret, mwc *admissionregistrationv1.MutatingWebhookConfiguration, reason, eventReason, msg string) (reconcile.Result, error) {
	r.metrics.SourceValid.Set(0)
	r.metrics.InSync.Set(0)
	r.count(reason)
	log.Info(MsgRefused, logkeys.Outcome, OutcomeRefused, logkeys.Reason, reason, logkeys.Detail, msg)
	r.event(secret, mwc, corev1.EventTypeWarning, eventReason,
		"%s; the caBundle of MutatingWebhookConfiguration %s is left as it is", msg, r.cfg.WebhookConfiguration)
	return reconcile.Result{}, nil
}

// event records an Event regarding the Secret and related to the
// MutatingWebhookConfiguration. Either may be nil when it does not exist;
// the Event then names it without a UID.
func (r *Reconciler) event(secret *corev1.Secret, mwc *admissionregistrationv1.MutatingWebhookConfiguration, eventType, reason, note string, args ...any) {
	secret = cmp.Or(secret, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: r.cfg.SecretNamespace, Name: r.cfg.SecretName}})
	mwc = cmp.Or(mwc, &admissionregistrationv1.MutatingWebhookConfiguration{ObjectMeta: metav1.ObjectMeta{Name: r.cfg.WebhookConfiguration}})
	r.recorder.Eventf(secret, mwc, eventType, reason, eventAction, note, args...)
}

// failed counts and logs a sync that ended in err, and returns err so that
// the workqueue retries with backoff.
func (r *Reconciler) failed(log logr.Logger, reason string, err error) (reconcile.Result, error) {
	r.count(reason)
	log.Error(err, MsgFailed, logkeys.Outcome, OutcomeError, logkeys.Reason, reason)
	return reconcile.Result{}, err
}

func (r *Reconciler) count(reason string) {
	r.metrics.Errors.WithLabelValues(reason).Inc()
}

// sourceEventReasons maps every reason of an invalid source to its Event.
var sourceEventReasons = map[cabundle.Reason]string{
	cabundle.ReasonEmpty:      EventSourceEmpty,
	cabundle.ReasonUnparsable: EventSourceUnparsable,
	cabundle.ReasonNotCA:      EventSourceNotCA,
	cabundle.ReasonExpired:    EventSourceExpired,
}

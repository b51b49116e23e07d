package klm

import (
	"context"
	"errors"
	"fmt"

	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/util/workqueue"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

// The errors that end a reconcile early, each requeued with backoff after
// the status is written, as in internal/controller/manifest/controller.go.
var (
	errEmptyState         = errors.New("object has an empty state")
	errStateRequireUpdate = errors.New("manifest state requires update")
	errManagerInError     = errors.New("manager is in error state")
	errSyncedDiff         = errors.New(opSyncedDiff)
	errSameVersionDiff    = errors.New(opSameVersion)
)

// reconciler is the Manifest controller: one reconcile renders the layer,
// prunes what the last one applied and this one lacks, applies, and checks
// the state (controller.go Reconcile, install, delete).
type reconciler struct {
	kcp        client.Client // Manifests, from the manager's cache
	templates  templateReader
	skr        client.Client // the runtime, uncached
	namespaced namespacedFunc
	iv         Intervals
	limiter    workqueue.TypedRateLimiter[reconcile.Request]
	passes     *passes
}

// stop ends a reconcile with its result; nil goes on to the next step.
type stop struct {
	result reconcile.Result
	err    error
}

// Reconcile implements reconcile.Reconciler.
func (r *reconciler) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	defer r.passes.add(req.NamespacedName)
	m := &Manifest{}
	if err := r.kcp.Get(ctx, req.NamespacedName, m); err != nil {
		return reconcile.Result{}, client.IgnoreNotFound(err)
	}
	if m.Labels[SkipReconciliationLabel] == "true" {
		return reconcile.Result{RequeueAfter: r.iv.Success}, nil
	}
	prev := m.DeepCopy()
	s := r.prepare(ctx, req, m, prev)
	if s == nil && m.DeletionTimestamp.IsZero() {
		s = r.install(ctx, req, m, prev)
	} else if s == nil {
		s = r.remove(ctx, req, m, prev)
	}
	return s.result, s.err
}

// prepare initialises the status, adds the finalizer and records the
// first version, each in a reconcile of its own (controller.go
// prepareReconcile and resolveAndTrackSpec).
func (r *reconciler) prepare(ctx context.Context, req reconcile.Request, m, prev *Manifest) *stop {
	initConditions(m)
	if m.Status.State == "" {
		m.Status.State, m.Status.Operation = StateProcessing, errEmptyState.Error()
		return r.finish(ctx, m, prev, errEmptyState)
	}
	if m.DeletionTimestamp.IsZero() && controllerutil.AddFinalizer(m, Finalizer) {
		return r.update(ctx, req, m)
	}
	if m.Status.ObservedVersion == "" {
		return r.observe(ctx, req, m, prev)
	}
	return nil
}

// install is one reconcile of a Manifest that is not being deleted.
func (r *reconciler) install(ctx context.Context, req reconcile.Request, m, prev *Manifest) *stop {
	target, err := render(ctx, r.templates, r.namespaced, m)
	if err != nil {
		m.Status.State, m.Status.Operation = StateError, err.Error()
		return r.finish(ctx, m, prev, err)
	}
	setConditionTrue(m, ConditionResources, "resources are parsed and ready for use")
	if s := r.pruneAndApply(ctx, req, m, prev, target); s != nil {
		return s
	}
	state, err := stateCheck(ctx, r.skr, target)
	if err == nil && state == StateError {
		err = errManagerInError
	}
	if err != nil {
		m.Status.State, m.Status.Operation = StateError, err.Error()
		return r.finish(ctx, m, prev, err)
	}
	if from := m.Status.State; setState(m, state) {
		return r.finish(ctx, m, prev, fmt.Errorf("%w: from %s to %s", errStateRequireUpdate, from, state))
	}
	if m.Status.ObservedVersion != m.Spec.Version {
		return r.observe(ctx, req, m, prev)
	}
	return r.finish(ctx, m, prev, nil)
}

// remove is one reconcile of a Manifest being deleted: everything it
// applied is pruned, in two phases, then the finalizer goes
// (controller.go delete; there are no module CRs to wait for).
func (r *reconciler) remove(ctx context.Context, req reconcile.Request, m, prev *Manifest) *stop {
	if s := r.pruneAndApply(ctx, req, m, prev, nil); s != nil {
		return s
	}
	if from := m.Status.State; setState(m, StateDeleting) {
		return r.finish(ctx, m, prev, fmt.Errorf("%w: from %s to %s", errStateRequireUpdate, from, StateDeleting))
	}
	if m.Status.ObservedVersion != m.Spec.Version {
		return r.observe(ctx, req, m, prev)
	}
	if controllerutil.RemoveFinalizer(m, Finalizer) {
		return r.update(ctx, req, m)
	}
	return r.finish(ctx, m, prev, nil)
}

// pruneAndApply deletes, in two phases, what status.synced holds and
// target lacks, and only once that is gone applies target and records it
// as synced (controller.go pruneAndSync and pruneDiff,
// skrresources/sync.go SyncResources).
func (r *reconciler) pruneAndApply(ctx context.Context, req reconcile.Request, m, prev *Manifest,
	target []*unstructured.Unstructured,
) *stop {
	diff := pruneSet(m.Status.Synced, target)
	if len(diff) > 0 && m.DeletionTimestamp.IsZero() && m.Status.ObservedVersion == m.Spec.Version {
		m.Status.State, m.Status.Operation = StateWarning, opSameVersion
		return r.finish(ctx, m, prev, errSameVersionDiff)
	}
	switch err := deleteInPhases(ctx, r.skr, diff); {
	case errors.Is(err, errDeletionNotFinished):
		// KLM requeues here without writing the status.
		return &stop{result: reconcile.Result{RequeueAfter: r.limiter.When(req)}}
	case err != nil:
		m.Status.State, m.Status.Operation = StateError, err.Error()
		return r.finish(ctx, m, prev, err)
	}
	if err := apply(ctx, r.skr, target); err != nil {
		m.Status.State, m.Status.Operation = StateError, err.Error()
		return r.finish(ctx, m, prev, err)
	}
	applied := identities(target)
	changed := syncedChanged(m.Status.Synced, applied)
	m.Status.Synced = applied
	if !changed {
		return nil
	}
	if m.DeletionTimestamp.IsZero() {
		m.Status.State, m.Status.Operation = StateProcessing, opSyncedDiff
	} else if m.Status.State != StateWarning {
		m.Status.State, m.Status.Operation = StateDeleting, opSyncedDiff
	}
	return r.finish(ctx, m, prev, errSyncedDiff)
}

// observe records Spec.Version as the version last synced, and requeues.
func (r *reconciler) observe(ctx context.Context, req reconcile.Request, m, prev *Manifest) *stop {
	m.Status.ObservedVersion = m.Spec.Version
	if s := r.finish(ctx, m, prev, nil); s.err != nil {
		return s
	}
	return &stop{result: reconcile.Result{RequeueAfter: r.limiter.When(req)}}
}

// update writes m's metadata (the finalizer) and requeues.
func (r *reconciler) update(ctx context.Context, req reconcile.Request, m *Manifest) *stop {
	if err := r.kcp.Update(ctx, m); err != nil {
		return &stop{err: fmt.Errorf("update Manifest %s: %w", req.NamespacedName, err)}
	}
	return &stop{result: reconcile.Result{RequeueAfter: r.limiter.When(req)}}
}

// finish writes the status if it changed and ends the reconcile: with
// cause, which the workqueue retries with backoff, or with the requeue of
// the state reached (controller.go finishReconcile).
func (r *reconciler) finish(ctx context.Context, m, prev *Manifest, cause error) *stop {
	if !equality.Semantic.DeepEqual(m.Status, prev.Status) {
		if err := r.kcp.Status().Patch(ctx, m, client.MergeFrom(prev)); err != nil {
			return &stop{err: fmt.Errorf("patch the status of Manifest %s/%s: %w", m.Namespace, m.Name, err)}
		}
	}
	if cause != nil {
		return &stop{err: cause}
	}
	return &stop{result: reconcile.Result{RequeueAfter: r.iv.after(m.Status.State)}}
}

package klm

import (
	"context"
	"fmt"
	"math/rand/v2"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/workqueue"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

// mandatoryReconciler pins the Manifests of a mandatory module to the
// version of its ModuleReleaseMeta, as KLM's mandatory-module installation
// controller does for every Kyma (internal/controller/mandatorymodule,
// internal/service/mandatorymodule/installation): the ModuleReleaseMeta
// named after the module gives spec.mandatory.version, and the template
// TemplateName(module, version) must exist, or nothing changes. KLM does
// this per Kyma; the stand-in per Manifest, which here is one runtime.
type mandatoryReconciler struct {
	kcp    client.Client
	reader client.Reader
	every  time.Duration
}

// Reconcile implements reconcile.Reconciler.
func (r *mandatoryReconciler) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	m := &Manifest{}
	if err := r.kcp.Get(ctx, req.NamespacedName, m); err != nil {
		return reconcile.Result{}, client.IgnoreNotFound(err)
	}
	if m.Labels[MandatoryModuleLabel] != "true" || !m.DeletionTimestamp.IsZero() {
		return reconcile.Result{}, nil
	}
	mrm := &ModuleReleaseMeta{}
	err := r.kcp.Get(ctx, types.NamespacedName{Namespace: m.Namespace, Name: m.Spec.Module}, mrm)
	if client.IgnoreNotFound(err) != nil {
		return reconcile.Result{}, fmt.Errorf("get the ModuleReleaseMeta of %s: %w", req.NamespacedName, err)
	}
	if err != nil || mrm.Spec.Mandatory == nil {
		return reconcile.Result{RequeueAfter: r.every}, nil
	}
	version := mrm.Spec.Mandatory.Version
	template := types.NamespacedName{Namespace: m.Namespace, Name: TemplateName(m.Spec.Module, version)}
	if err := r.reader.Get(ctx, template, &corev1.ConfigMap{}); err != nil {
		return reconcile.Result{}, fmt.Errorf("get the template %s of mandatory module %s: %w", template, m.Spec.Module, err)
	}
	if m.Spec.Version != version {
		patch := client.MergeFrom(m.DeepCopy())
		m.Spec.Version = version
		if err := r.kcp.Patch(ctx, m, patch); err != nil {
			return reconcile.Result{}, fmt.Errorf("pin Manifest %s to %s: %w", req.NamespacedName, version, err)
		}
	}
	return reconcile.Result{RequeueAfter: r.every}, nil
}

// setupMandatoryController watches Manifests when created and when their
// spec or labels change, as KLM watches Kymas, and ModuleReleaseMetas,
// with the same backoff as the Manifest controller (cmd/main.go).
func setupMandatoryController(mgr manager.Manager, o Options) error {
	r := &mandatoryReconciler{kcp: mgr.GetClient(), reader: mgr.GetAPIReader(), every: o.Intervals.Mandatory}
	err := builder.ControllerManagedBy(mgr).
		Named("mandatory").
		For(&Manifest{}, builder.WithPredicates(predicate.Or(predicate.GenerationChangedPredicate{},
			predicate.LabelChangedPredicate{}))).
		Watches(&ModuleReleaseMeta{}, releaseHandler(mgr.GetClient(), o.RolloutMaxDelay)).
		WithOptions(controller.Options{RateLimiter: failureLimiter(o.Intervals)}).
		Complete(r)
	if err != nil {
		return fmt.Errorf("klm: mandatory-module controller: %w", err)
	}
	return nil
}

// releaseHandler enqueues the mandatory Manifests of a ModuleReleaseMeta's
// module: at once when it is created or deleted, and each after its own
// rolloutDelay when it changes (internal/watch/modulereleasemeta/mrm_handler.go).
// A Manifest's periodic requeue comes first if it is due earlier.
func releaseHandler(c client.Client, maxDelay time.Duration) handler.EventHandler {
	enqueue := func(ctx context.Context, obj client.Object, q queue, delay func() time.Duration) {
		var list ManifestList
		err := c.List(ctx, &list, client.InNamespace(obj.GetNamespace()),
			client.MatchingLabels{ModuleNameLabel: obj.GetName(), MandatoryModuleLabel: "true"})
		if err != nil {
			return // as KLM's handler: the periodic requeue catches up
		}
		for _, m := range list.Items {
			q.AddAfter(reconcile.Request{NamespacedName: client.ObjectKeyFromObject(&m)}, delay())
		}
	}
	now := func() time.Duration { return 0 }
	return handler.Funcs{
		CreateFunc: func(ctx context.Context, e event.CreateEvent, q queue) {
			enqueue(ctx, e.Object, q, now)
		},
		UpdateFunc: func(ctx context.Context, e event.UpdateEvent, q queue) {
			enqueue(ctx, e.ObjectNew, q, func() time.Duration { return rolloutDelay(maxDelay, rand.Int64N) })
		},
		DeleteFunc: func(ctx context.Context, e event.DeleteEvent, q queue) {
			enqueue(ctx, e.Object, q, now)
		},
	}
}

// queue is the controller's work queue.
type queue = workqueue.TypedRateLimitingInterface[reconcile.Request]

// rolloutDelay draws a delay uniform in [0, maxDelay) with intn, which
// returns a number in [0, n); 0 when maxDelay is not positive.
func rolloutDelay(maxDelay time.Duration, intn func(n int64) int64) time.Duration {
	if maxDelay <= 0 {
		return 0
	}
	return time.Duration(intn(int64(maxDelay)))
}

package syncer

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/workqueue"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/healthz"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

// CacheOptions restricts the manager's cache to the objects the syncer
// reads: the Secret, the MutatingWebhookConfiguration and the
// emergency-disable marker beside the Secret. Its field selector on
// metadata.name lets RBAC name them in resourceNames; reads of other types
// fail, not start a cluster-wide informer.
func CacheOptions(cfg Config) cache.Options {
	return cache.Options{
		ReaderFailOnMissingInformer: true,
		DefaultTransform:            cache.TransformStripManagedFields(), // never read, and large
		ByObject: map[client.Object]cache.ByObject{
			&corev1.Secret{}: {
				Namespaces: map[string]cache.Config{cfg.SecretNamespace: {}},
				Field:      fields.OneTermEqualSelector("metadata.name", cfg.SecretName),
			},
			&admissionregistrationv1.MutatingWebhookConfiguration{}: {
				Field: fields.OneTermEqualSelector("metadata.name", cfg.WebhookConfiguration),
			},
			&corev1.ConfigMap{}: {
				Namespaces: map[string]cache.Config{cfg.SecretNamespace: {}},
				Field:      fields.OneTermEqualSelector("metadata.name", EmergencyDisableName),
			},
		},
	}
}

// SetupWithManager adds to mgr the reconciler, which releases the Apply
// entries of cfg.ReleaseFieldManagers after each sync, and, on the leader
// only, the is_leader gauge and the release of the Apply entry of the
// syncer's earlier builds. The manager must use CacheOptions(cfg) and must
// not have been started.
func SetupWithManager(ctx context.Context, mgr manager.Manager, cfg Config, m *Metrics) error {
	if err := cfg.Validate(); err != nil {
		return err
	}
	if err := registerInformers(ctx, mgr.GetCache(), m); err != nil {
		return err
	}
	// Every event maps to the one key, so a burst folds into one reconcile.
	toKey := handler.EnqueueRequestsFromMapFunc(func(context.Context, client.Object) []reconcile.Request {
		return []reconcile.Request{{NamespacedName: types.NamespacedName{Name: cfg.WebhookConfiguration}}}
	})
	// The predicates guard against a manager built without CacheOptions.
	named := func(namespace, name string) builder.Predicates {
		return builder.WithPredicates(predicate.NewPredicateFuncs(func(o client.Object) bool {
			return o.GetNamespace() == namespace && o.GetName() == name
		}))
	}
	// The API reader, not the cache: the cache strips managedFields.
	rel := releaser{reader: mgr.GetAPIReader(), client: mgr.GetClient(), name: cfg.WebhookConfiguration, metrics: m}
	err := ctrl.NewControllerManagedBy(mgr).
		Named(ControllerName).
		// Watching the MutatingWebhookConfiguration corrects drift.
		Watches(&admissionregistrationv1.MutatingWebhookConfiguration{}, toKey, named("", cfg.WebhookConfiguration)).
		Watches(&corev1.Secret{}, toKey, named(cfg.SecretNamespace, cfg.SecretName)).
		// The marker tells a deleted MWC under the emergency disable from a missing one.
		Watches(&corev1.ConfigMap{}, toKey, named(cfg.SecretNamespace, EmergencyDisableName)).
		WithOptions(controller.Options{RateLimiter: retryBackoff()}).
		Complete(withRelease(NewReconciler(mgr.GetClient(), mgr.GetEventRecorder(ControllerName), m, cfg),
			rel, cfg.ReleaseFieldManagers))
	if err != nil {
		return fmt.Errorf("set up controller %s: %w", ControllerName, err)
	}
	// A RunnableFunc, like the controller, runs only on the leader.
	if err := mgr.Add(manager.RunnableFunc(func(ctx context.Context) error {
		m.IsLeader.Set(1)
		defer m.IsLeader.Set(0)
		rel.releaseEarlierBuildUntilDone(ctx, mgr.GetLogger().WithName(ControllerName))
		<-ctx.Done()
		return nil
	})); err != nil {
		return fmt.Errorf("add the leader gauge and the release of the server-side apply entry: %w", err)
	}
	return nil
}

// registerInformers registers the informers of CacheOptions. The controller
// starts only on the leader; the informers, registered now, keep the objects
// in every replica's cache, ready to take over, and keep the gauges of the
// MWC and of the marker on every replica.
func registerInformers(ctx context.Context, c cache.Cache, m *Metrics) error {
	informers := []struct {
		obj   client.Object
		gauge prometheus.Gauge // 1 while the object exists; none for the Secret
	}{
		{&corev1.Secret{}, nil},
		{&admissionregistrationv1.MutatingWebhookConfiguration{}, m.WebhookConfigurationFound},
		{&corev1.ConfigMap{}, m.EmergencyDisabled},
	}
	for _, g := range informers {
		informer, err := c.GetInformer(ctx, g.obj)
		if err != nil {
			return fmt.Errorf("register informer for %T: %w", g.obj, err)
		}
		if g.gauge == nil {
			continue
		}
		if _, err := informer.AddEventHandler(presence(g.gauge)); err != nil {
			return fmt.Errorf("watch %T for its gauge: %w", g.obj, err)
		}
	}
	return nil
}

// CacheSyncedCheck is a readiness check that passes once the cache has synced,
// on standbys too: they have everything they need to take over at once.
func CacheSyncedCheck(c cache.Cache) healthz.Checker {
	return func(req *http.Request) error {
		ctx, cancel := context.WithTimeout(req.Context(), time.Second)
		defer cancel()
		if !c.WaitForCacheSync(ctx) {
			return errors.New("cache not synced")
		}
		return nil
	}
}

// retryBackoff backs failed syncs off up to 30 s, not 1000 s as in
// controller-runtime: a fix shows within the out-of-sync alert's 2 minutes.
func retryBackoff() workqueue.TypedRateLimiter[reconcile.Request] {
	return workqueue.NewTypedItemExponentialFailureRateLimiter[reconcile.Request](100*time.Millisecond, 30*time.Second)
}

package klm

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/manager"
)

// setupManifestController reconciles every change of a Manifest, its
// status included, one Manifest at a time, with r's rate limiter for
// errors (internal/controller/manifest/setup.go; KLM runs one reconcile
// at a time by default).
func setupManifestController(mgr manager.Manager, r *reconciler) error {
	err := builder.ControllerManagedBy(mgr).
		Named("manifest").
		For(&Manifest{}).
		WithOptions(controller.Options{MaxConcurrentReconciles: 1, RateLimiter: r.limiter}).
		Complete(r)
	if err != nil {
		return fmt.Errorf("klm: manifest controller: %w", err)
	}
	return nil
}

// configMapReader reads template ConfigMaps straight from the API server,
// so that the manager caches no ConfigMaps.
func configMapReader(reader client.Reader) templateReader {
	return func(ctx context.Context, key types.NamespacedName) (*corev1.ConfigMap, error) {
		cm := &corev1.ConfigMap{}
		if err := reader.Get(ctx, key, cm); err != nil {
			return nil, err
		}
		return cm, nil
	}
}

package klm

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/go-logr/logr"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/config"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

// Options configure a KLM.
type Options struct {
	// ControlPlane is where Manifests, ModuleReleaseMetas and templates
	// live, KLM's control plane (KCP); Runtime is the cluster the
	// Manifests apply to, a Kyma runtime (SKR). They may name the same
	// API server.
	ControlPlane, Runtime *rest.Config
	// Namespace of the control plane to watch; every namespace if empty
	// (KLM watches kcp-system).
	Namespace string
	// Intervals; each zero field takes DefaultIntervals' value.
	Intervals Intervals
	// RolloutMaxDelay bounds the random delay, uniform in [0,
	// RolloutMaxDelay), with which a ModuleReleaseMeta's new version
	// reaches each Manifest; 0, the default, applies it at once. KLM's
	// --module-upgrade-rollout-max-delay defaults to 5 minutes.
	RolloutMaxDelay time.Duration
	// Log receives the controllers' logs; discarded if unset.
	Log logr.Logger
}

// KLM is a running stand-in: the Manifest controller and the
// mandatory-module controller in one controller-runtime manager.
type KLM struct {
	cancel context.CancelFunc
	done   chan error
	passes *passes
}

// Start starts a KLM and returns once its cache has synced. Stop ends it.
func Start(ctx context.Context, o Options) (*KLM, error) {
	if o.ControlPlane == nil || o.Runtime == nil {
		return nil, errors.New("klm: ControlPlane and Runtime must be set")
	}
	o.Intervals = withDefaults(o.Intervals)
	scheme, err := newScheme()
	if err != nil {
		return nil, err
	}
	mgr, err := newManager(o, scheme)
	if err != nil {
		return nil, err
	}
	k := &KLM{done: make(chan error, 1), passes: &passes{n: map[types.NamespacedName]int{}}}
	if err := k.setup(mgr, o, scheme); err != nil {
		return nil, err
	}
	ctx, k.cancel = context.WithCancel(ctx)
	go func() { k.done <- mgr.Start(ctx) }()
	if !mgr.GetCache().WaitForCacheSync(ctx) {
		k.cancel()
		return nil, fmt.Errorf("klm: cache did not sync: %w", <-k.done)
	}
	return k, nil
}

// Stop stops the controllers and waits until they have ended.
func (k *KLM) Stop() error {
	k.cancel()
	return <-k.done
}

// Passes returns how many reconciles of the Manifest key the Manifest
// controller has finished, whatever their outcome: a skipped Manifest's
// included. A test waits for more passes to know that the controller has
// looked again.
func (k *KLM) Passes(key types.NamespacedName) int { return k.passes.get(key) }

func (k *KLM) setup(mgr manager.Manager, o Options, scheme *runtime.Scheme) error {
	skr, err := client.New(o.Runtime, client.Options{Scheme: scheme})
	if err != nil {
		return fmt.Errorf("klm: runtime client: %w", err)
	}
	r := &reconciler{
		kcp: mgr.GetClient(), skr: skr, iv: o.Intervals, limiter: failureLimiter(o.Intervals), passes: k.passes,
		templates:  configMapReader(mgr.GetAPIReader()),
		namespaced: restMapperScope(skr.RESTMapper()),
	}
	if err := setupManifestController(mgr, r); err != nil {
		return err
	}
	return setupMandatoryController(mgr, o)
}

// failureLimiter is KLM's per-item exponential backoff (internal/rate_limiter.go).
// KLM's also holds a token bucket of 1000 a second, which no test reaches.
func failureLimiter(iv Intervals) workqueue.TypedRateLimiter[reconcile.Request] {
	return workqueue.NewTypedItemExponentialFailureRateLimiter[reconcile.Request](iv.FailureBase, iv.FailureMax)
}

func newScheme() (*runtime.Scheme, error) {
	s := runtime.NewScheme()
	if err := errors.Join(clientgoscheme.AddToScheme(s), AddToScheme(s)); err != nil {
		return nil, fmt.Errorf("klm: scheme: %w", err)
	}
	return s, nil
}

func newManager(o Options, scheme *runtime.Scheme) (manager.Manager, error) {
	log := o.Log
	if log.GetSink() == nil {
		log = logr.Discard()
	}
	opts := manager.Options{
		Scheme:                 scheme,
		Logger:                 log,
		Metrics:                metricsserver.Options{BindAddress: "0"},
		HealthProbeBindAddress: "0",
		// Tests start several in one process.
		Controller: config.Controller{SkipNameValidation: ptr.To(true)},
	}
	if o.Namespace != "" {
		opts.Cache = cache.Options{DefaultNamespaces: map[string]cache.Config{o.Namespace: {}}}
	}
	mgr, err := manager.New(o.ControlPlane, opts)
	if err != nil {
		return nil, fmt.Errorf("klm: manager: %w", err)
	}
	return mgr, nil
}

func withDefaults(iv Intervals) Intervals {
	d := DefaultIntervals()
	return Intervals{
		Success: cmp.Or(iv.Success, d.Success), Busy: cmp.Or(iv.Busy, d.Busy),
		Warning: cmp.Or(iv.Warning, d.Warning), Error: cmp.Or(iv.Error, d.Error),
		FailureBase: cmp.Or(iv.FailureBase, d.FailureBase), FailureMax: cmp.Or(iv.FailureMax, d.FailureMax),
		Mandatory: cmp.Or(iv.Mandatory, d.Mandatory),
	}
}

// restMapperScope answers namespacedFunc from the runtime's REST mapper.
func restMapperScope(mapper meta.RESTMapper) namespacedFunc {
	return func(gvk schema.GroupVersionKind) (bool, error) {
		m, err := mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
		if err != nil {
			return false, err
		}
		return m.Scope.Name() == meta.RESTScopeNameNamespace, nil
	}
}

// passes counts finished reconciles by Manifest.
type passes struct {
	mu sync.Mutex
	n  map[types.NamespacedName]int
}

func (p *passes) add(key types.NamespacedName) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.n[key]++
}

func (p *passes) get(key types.NamespacedName) int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.n[key]
}

package kubelet

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	corelisters "k8s.io/client-go/listers/core/v1"
	discoverylisters "k8s.io/client-go/listers/discovery/v1"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"

	"github.com/kyma-project/kim-snatch/test/framework"
)

// DefaultNamespace is the namespace whose Pods the stand-in runs unless
// Options.Namespace names another.
const DefaultNamespace = "kyma-system"

// EndpointSliceManager is the endpointslice.kubernetes.io/managed-by
// value of the EndpointSlices the stand-in writes. kube-controller-manager's
// endpointslice controller leaves slices of other managers alone, and
// test/e2e/stack uses a manager of its own.
const EndpointSliceManager = "endpointslices.kubelet.e2e.kim-snatch.kyma-project.io"

// EndpointAddress is the address of every endpoint the stand-in writes:
// the containers listen on loopback. An IPv4 EndpointSlice rejects a
// loopback address, so the slices have address type FQDN, which only has
// to hold a domain name; the API server dials the address as it stands.
const EndpointAddress = "127.0.0.1"

// Options configure the stand-in.
type Options struct {
	// Config authenticates as a cluster administrator. The stand-in reads
	// and writes Pods, Services, EndpointSlices, ServiceAccount tokens,
	// Secrets and ConfigMaps with it, as the kubelet and
	// kube-controller-manager do with theirs.
	Config *rest.Config
	// Namespace is where the stand-in runs Pods and keeps endpoints;
	// DefaultNamespace if empty.
	Namespace string
	// Dir holds each Pod's volumes, kubeconfig and container logs, under
	// pods/<namespace>_<name>_<uid>/. A temporary directory, removed by
	// Stop unless SNATCH_KEEP_CLUSTER is set, if empty.
	Dir string
	// ProjectionDelay is how long after a change of a Secret its volumes
	// in running Pods follow, with the kubelet's atomic ..data swap. The
	// first content is written before the containers start.
	ProjectionDelay time.Duration
	// Runtimes run containers by image name (see ImageName). A Pod one of
	// whose containers has an image without a runtime is not run: it
	// stays as the scheduler left it.
	Runtimes map[string]Runtime
	// MaxProbePeriod, when positive, bounds the periodSeconds and
	// initialDelaySeconds of readiness probes, so that tests need not wait
	// for the production periods. Zero probes as the Pod says.
	MaxProbePeriod time.Duration
	// RestartBackoff is the delay before a container that exited is
	// started again; it doubles with each exit in a row, up to 32 times
	// itself, and a run longer than that starts the count again. 1s if
	// zero.
	RestartBackoff time.Duration
	// Logf, when set, receives what the stand-in does with each Pod,
	// one line at a time, as the kubelet's log would.
	Logf func(format string, args ...any)
}

// Kubelet is a running stand-in for the kubelet of every Node and for
// kube-controller-manager's endpointslice controller, in one namespace.
type Kubelet struct {
	opts      Options
	client    kubernetes.Interface
	factory   informers.SharedInformerFactory
	pods      corelisters.PodLister
	services  corelisters.ServiceLister
	slices    discoverylisters.EndpointSliceLister
	endpoints *endpointsController
	removeDir bool

	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup

	mu       sync.Mutex
	stopped  bool
	workers  map[types.UID]*podWorker
	finished map[types.UID]bool // Pods whose containers were stopped for good
	ignored  map[types.UID]bool // Pods without a runtime, logged once
}

// Start starts the stand-in and returns once its informers have synced.
// It runs Pods until Stop is called or ctx ends.
func Start(ctx context.Context, o Options) (*Kubelet, error) {
	if o.Config == nil {
		return nil, errors.New("kubelet: Options.Config is required")
	}
	if o.Namespace == "" {
		o.Namespace = DefaultNamespace
	}
	if o.RestartBackoff <= 0 {
		o.RestartBackoff = time.Second
	}
	if o.Logf == nil {
		o.Logf = func(string, ...any) {}
	}
	k := &Kubelet{opts: o, workers: map[types.UID]*podWorker{}, finished: map[types.UID]bool{}, ignored: map[types.UID]bool{}}
	if k.opts.Dir == "" {
		dir, err := os.MkdirTemp("", "kim-snatch-kubelet-")
		if err != nil {
			return nil, err
		}
		k.opts.Dir, k.removeDir = dir, true
	}
	cfg := rest.CopyConfig(o.Config)
	// The API server warns at every write that FQDN endpoints are
	// deprecated; the stand-in knows.
	cfg.WarningHandler = rest.NoWarnings{}
	cfg.QPS, cfg.Burst = max(cfg.QPS, 200), max(cfg.Burst, 400)
	var err error
	if k.client, err = kubernetes.NewForConfig(cfg); err != nil {
		return nil, err
	}
	k.factory = informers.NewSharedInformerFactoryWithOptions(k.client, 0, informers.WithNamespace(o.Namespace))
	podInformer := k.factory.Core().V1().Pods()
	serviceInformer := k.factory.Core().V1().Services()
	sliceInformer := k.factory.Discovery().V1().EndpointSlices()
	k.pods, k.services, k.slices = podInformer.Lister(), serviceInformer.Lister(), sliceInformer.Lister()
	k.endpoints = newEndpointsController(k)
	if _, err := podInformer.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj any) { k.onPod(obj, false) },
		UpdateFunc: func(_, obj any) { k.onPod(obj, false) },
		DeleteFunc: func(obj any) { k.onPod(obj, true) },
	}); err != nil {
		return nil, err
	}
	if err := k.endpoints.register(serviceInformer.Informer(), sliceInformer.Informer()); err != nil {
		return nil, err
	}
	k.ctx, k.cancel = context.WithCancel(ctx)
	k.factory.Start(k.ctx.Done())
	for typ, ok := range k.factory.WaitForCacheSync(ctx.Done()) {
		if !ok {
			k.Stop()
			return nil, fmt.Errorf("kubelet: informer for %v not synced: %w", typ, ctx.Err())
		}
	}
	k.wg.Go(func() { k.endpoints.run(k.ctx) })
	return k, nil
}

// Stop stops every container, with its Pod's grace period, and the
// stand-in, and waits for them. Pod objects and EndpointSlices stay as
// they are, as when a kubelet and kube-controller-manager go away.
func (k *Kubelet) Stop() {
	k.mu.Lock()
	k.stopped = true
	k.mu.Unlock()
	k.cancel()
	k.endpoints.queue.ShutDown()
	k.wg.Wait()
	k.factory.Shutdown()
	if k.removeDir && os.Getenv(framework.KeepEnv) == "" {
		_ = os.RemoveAll(k.opts.Dir)
	}
}

// LogPaths returns the log files of a container of the Pod with uid, one
// per start, oldest first, while the stand-in runs the Pod.
func (k *Kubelet) LogPaths(uid types.UID, container string) []string {
	k.mu.Lock()
	w := k.workers[uid]
	k.mu.Unlock()
	if w == nil {
		return nil
	}
	paths, _ := filepath.Glob(filepath.Join(w.dir, "logs", container+"-*.log"))
	return paths
}

// onPod hands a Pod to its worker, starting one for a bound Pod of
// runnable images that has none, and requeues the endpoints.
func (k *Kubelet) onPod(obj any, removed bool) {
	if tomb, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = tomb.Obj
	}
	pod, ok := obj.(*corev1.Pod)
	if !ok {
		return
	}
	k.endpoints.enqueueAll()
	if pod.Spec.NodeName == "" {
		return
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.stopped {
		return
	}
	w := k.workers[pod.UID]
	if w == nil {
		if removed || k.finished[pod.UID] || terminal(pod) || !k.runnable(pod) {
			return
		}
		w = newPodWorker(k, pod)
		k.workers[pod.UID] = w
		k.wg.Go(func() { w.run(k.ctx) })
	}
	w.update(pod, removed)
}

// runnable reports whether every container of pod has a runtime. Pods
// with init containers are not run. The caller holds k.mu.
func (k *Kubelet) runnable(pod *corev1.Pod) bool {
	why := ""
	if len(pod.Spec.InitContainers) > 0 {
		why = "it has init containers"
	}
	for _, c := range pod.Spec.Containers {
		if _, ok := k.opts.Runtimes[ImageName(c.Image)]; !ok && why == "" {
			why = fmt.Sprintf("no runtime for image %s of container %s", c.Image, c.Name)
		}
	}
	if why != "" && !k.ignored[pod.UID] {
		k.ignored[pod.UID] = true
		k.opts.Logf("kubelet: not running Pod %s/%s: %s", pod.Namespace, pod.Name, why)
	}
	return why == ""
}

// finish forgets the worker of a Pod whose containers are stopped for
// good.
func (k *Kubelet) finish(w *podWorker) {
	k.mu.Lock()
	delete(k.workers, w.uid)
	k.finished[w.uid] = true
	k.mu.Unlock()
	k.endpoints.enqueueAll()
}

// podEndpointInfo is what the endpoints need of a Pod the stand-in runs.
type podEndpointInfo struct {
	ports *portMap
	zone  string
}

// endpointInfo returns the endpoint information of the Pod with uid if
// the stand-in runs it: admitted, and its containers not stopped for
// good.
func (k *Kubelet) endpointInfo(uid types.UID) (podEndpointInfo, bool) {
	k.mu.Lock()
	w := k.workers[uid]
	k.mu.Unlock()
	if w == nil {
		return podEndpointInfo{}, false
	}
	return w.endpointInfo()
}

func terminal(pod *corev1.Pod) bool {
	return pod.Status.Phase == corev1.PodSucceeded || pod.Status.Phase == corev1.PodFailed
}

package kubelet

import (
	"context"
	"fmt"
	"maps"
	"time"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/utils/ptr"
)

// endpointsController stands in for kube-controller-manager's
// endpointslice controller for the Pods the stand-in runs. For every
// Service of the namespace with a selector it keeps one EndpointSlice per
// matching Pod, of address type FQDN, with one endpoint at
// EndpointAddress. Its conditions follow the Pod object as the
// controller's do: serving is the Pod's Ready condition, terminating is
// its deletionTimestamp, and ready is serving and not terminating (or
// always, with publishNotReadyAddresses). Its ports are the Service's
// ports, named as they are, each at the loopback port that the target
// port (a number, or the name of a container port) maps to in that Pod;
// a port the Pod does not have is left out, as the controller leaves out
// a named port a Pod does not declare. Slices of Pods that are gone, no
// longer match, or whose containers stopped for good, and of Services
// that are gone or lost their selector, are deleted.
type endpointsController struct {
	k     *Kubelet
	queue workqueue.TypedRateLimitingInterface[string]
}

func newEndpointsController(k *Kubelet) *endpointsController {
	return &endpointsController{k: k, queue: workqueue.NewTypedRateLimitingQueue(
		workqueue.NewTypedItemExponentialFailureRateLimiter[string](50*time.Millisecond, 5*time.Second))}
}

func (e *endpointsController) register(services, slices cache.SharedIndexInformer) error {
	enqueue := func(obj any) {
		if key, err := cache.DeletionHandlingMetaNamespaceKeyFunc(obj); err == nil {
			_, name, _ := cache.SplitMetaNamespaceKey(key)
			e.queue.Add(name)
		}
	}
	if _, err := services.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc: enqueue, UpdateFunc: func(_, obj any) { enqueue(obj) }, DeleteFunc: enqueue,
	}); err != nil {
		return err
	}
	// A slice of ours that someone else changed or deleted is written
	// again.
	ours := func(obj any) {
		if tomb, ok := obj.(cache.DeletedFinalStateUnknown); ok {
			obj = tomb.Obj
		}
		if s, ok := obj.(*discoveryv1.EndpointSlice); ok && s.Labels[discoveryv1.LabelManagedBy] == EndpointSliceManager {
			if svc := s.Labels[discoveryv1.LabelServiceName]; svc != "" {
				e.queue.Add(svc)
			}
		}
	}
	_, err := slices.AddEventHandler(cache.ResourceEventHandlerFuncs{
		UpdateFunc: func(_, obj any) { ours(obj) }, DeleteFunc: ours,
	})
	return err
}

// enqueueAll queues every Service of the namespace: a Pod changed.
func (e *endpointsController) enqueueAll() {
	svcs, err := e.k.services.Services(e.k.opts.Namespace).List(labels.Everything())
	if err != nil {
		return
	}
	for _, s := range svcs {
		e.queue.Add(s.Name)
	}
}

// run syncs queued Services until the queue shuts down.
func (e *endpointsController) run(ctx context.Context) {
	for {
		name, quit := e.queue.Get()
		if quit {
			return
		}
		if err := e.sync(ctx, name); err != nil && ctx.Err() == nil {
			e.k.opts.Logf("kubelet: endpoints of Service %s/%s: %v", e.k.opts.Namespace, name, err)
			e.queue.AddRateLimited(name)
		} else {
			e.queue.Forget(name)
		}
		e.queue.Done(name)
	}
}

func (e *endpointsController) sync(ctx context.Context, name string) error {
	ns := e.k.opts.Namespace
	existing, err := e.k.slices.EndpointSlices(ns).List(labels.SelectorFromSet(labels.Set{
		discoveryv1.LabelServiceName: name,
		discoveryv1.LabelManagedBy:   EndpointSliceManager,
	}))
	if err != nil {
		return err
	}
	svc, err := e.k.services.Services(ns).Get(name)
	if err != nil && !apierrors.IsNotFound(err) {
		return err
	}
	desired := map[string]*discoveryv1.EndpointSlice{}
	if err == nil && svc.Spec.Selector != nil && svc.Spec.Type != corev1.ServiceTypeExternalName {
		pods, err := e.k.pods.Pods(ns).List(labels.Set(svc.Spec.Selector).AsSelectorPreValidated())
		if err != nil {
			return err
		}
		for _, pod := range pods {
			if pod.Spec.NodeName == "" || terminal(pod) {
				continue
			}
			info, ok := e.k.endpointInfo(pod.UID)
			if !ok {
				continue
			}
			s := endpointSlice(svc, pod, info)
			desired[s.Name] = s
		}
	}
	slices := e.k.client.DiscoveryV1().EndpointSlices(ns)
	for _, ex := range existing {
		want, ok := desired[ex.Name]
		delete(desired, ex.Name)
		switch {
		case !ok:
			err := slices.Delete(ctx, ex.Name, metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &ex.UID}})
			if err != nil && !apierrors.IsNotFound(err) && !apierrors.IsConflict(err) {
				return fmt.Errorf("delete EndpointSlice %s: %w", ex.Name, err)
			}
		case !sameSlice(ex, want):
			want.ResourceVersion = ex.ResourceVersion
			if _, err := slices.Update(ctx, want, metav1.UpdateOptions{FieldManager: EndpointSliceManager}); err != nil {
				return fmt.Errorf("update EndpointSlice %s: %w", ex.Name, err)
			}
		}
	}
	for _, want := range desired {
		if _, err := slices.Create(ctx, want, metav1.CreateOptions{FieldManager: EndpointSliceManager}); err != nil {
			return fmt.Errorf("create EndpointSlice %s: %w", want.Name, err)
		}
	}
	return nil
}

// endpointSlice is the slice of svc for pod.
func endpointSlice(svc *corev1.Service, pod *corev1.Pod, info podEndpointInfo) *discoveryv1.EndpointSlice {
	serving := podReady(pod)
	terminating := pod.DeletionTimestamp != nil
	ready := svc.Spec.PublishNotReadyAddresses || serving && !terminating
	lbls := maps.Clone(svc.Labels)
	if lbls == nil {
		lbls = map[string]string{}
	}
	lbls[discoveryv1.LabelServiceName] = svc.Name
	lbls[discoveryv1.LabelManagedBy] = EndpointSliceManager
	if svc.Spec.ClusterIP == corev1.ClusterIPNone {
		lbls[corev1.IsHeadlessService] = ""
	}
	ep := discoveryv1.Endpoint{
		Addresses:  []string{EndpointAddress},
		Conditions: discoveryv1.EndpointConditions{Ready: &ready, Serving: &serving, Terminating: &terminating},
		TargetRef:  &corev1.ObjectReference{Kind: "Pod", Namespace: pod.Namespace, Name: pod.Name, UID: pod.UID},
		NodeName:   ptr.To(pod.Spec.NodeName),
	}
	if info.zone != "" {
		ep.Zone = ptr.To(info.zone)
	}
	ports := []discoveryv1.EndpointPort{}
	for _, sp := range svc.Spec.Ports {
		n, ok := targetPort(pod, sp)
		if !ok {
			continue
		}
		actual, ok := info.ports.lookup(n)
		if !ok {
			continue
		}
		ports = append(ports, discoveryv1.EndpointPort{
			Name: ptr.To(sp.Name), Port: ptr.To(int32(actual)), //nolint:gosec // a TCP port
			Protocol: ptr.To(sp.Protocol), AppProtocol: sp.AppProtocol,
		})
	}
	return &discoveryv1.EndpointSlice{
		ObjectMeta: metav1.ObjectMeta{
			Name: sliceName(svc, pod), Namespace: svc.Namespace, Labels: lbls,
			OwnerReferences: []metav1.OwnerReference{{
				APIVersion: "v1", Kind: "Service", Name: svc.Name, UID: svc.UID,
				Controller: ptr.To(true), BlockOwnerDeletion: ptr.To(true),
			}},
		},
		AddressType: discoveryv1.AddressTypeFQDN,
		Endpoints:   []discoveryv1.Endpoint{ep},
		Ports:       ports,
	}
}

// sliceName names the slice of svc for pod; the controller's own slices
// have generated names <service>-<5 characters>.
func sliceName(svc *corev1.Service, pod *corev1.Pod) string {
	name := svc.Name + "-" + pod.Name
	if len(name) > 253 {
		name = svc.Name + "-" + string(pod.UID)
	}
	return name
}

// targetPort is the container port of pod that sp targets: a number as it
// is, a name as the container port of that name and protocol.
func targetPort(pod *corev1.Pod, sp corev1.ServicePort) (int32, bool) {
	tp := sp.TargetPort
	switch {
	case tp.Type == intstr.String:
		for _, c := range pod.Spec.Containers {
			for _, cp := range c.Ports {
				if cp.Name == tp.StrVal && cp.Protocol == sp.Protocol {
					return cp.ContainerPort, true
				}
			}
		}
		return 0, false
	case tp.IntVal == 0:
		return sp.Port, true
	}
	return tp.IntVal, true
}

func podReady(pod *corev1.Pod) bool {
	for _, c := range pod.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// sameSlice reports whether ex already holds what want says.
func sameSlice(ex, want *discoveryv1.EndpointSlice) bool {
	return ex.AddressType == want.AddressType &&
		apiequality.Semantic.DeepEqual(ex.Labels, want.Labels) &&
		apiequality.Semantic.DeepEqual(ex.OwnerReferences, want.OwnerReferences) &&
		apiequality.Semantic.DeepEqual(ex.Endpoints, want.Endpoints) &&
		apiequality.Semantic.DeepEqual(ex.Ports, want.Ports)
}

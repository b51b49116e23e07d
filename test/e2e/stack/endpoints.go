package stack

import (
	"context"
	"strconv"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"
	discoveryv1ac "k8s.io/client-go/applyconfigurations/discovery/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

// EndpointSliceManager is the endpointslice.kubernetes.io/managed-by
// value of the EndpointSlices the stack writes for the webhook replicas.
// kube-controller-manager's endpointslice controller leaves slices of
// other managers alone.
const EndpointSliceManager = "endpointslices.stack.e2e.kim-snatch.kyma-project.io"

// EndpointAddress is the address of every endpoint the stack writes. The
// replicas listen on loopback, which an IPv4 slice rejects; an FQDN slice
// only has to hold a domain name, which 127.0.0.1 is, and the API server
// dials the address as it stands.
const EndpointAddress = "127.0.0.1"

// probeInterval is how often the endpoints follow the replicas' /readyz.
const probeInterval = 100 * time.Millisecond

// endpoints stands in for kube-controller-manager's endpointslice
// controller and the kubelet's readiness probes together: one FQDN
// EndpointSlice per webhook replica for the webhook's Service, with one
// endpoint at EndpointAddress and the replica's webhook port under the
// Service port's name, Ready while the replica's /readyz answers 200 and
// it is not stopping. A stopping replica is Terminating and not Ready at
// once, as the endpointslice controller marks a Pod that is being
// deleted. The API server, with aggregator routing, dials a Ready
// endpoint for every new connection to the webhook, as kube-proxy would
// pick one behind the ClusterIP.
type endpoints struct {
	client   kubernetes.Interface
	portName string

	mu       sync.Mutex
	replicas []*Replica
	state    map[*Replica]*endpointState
}

type endpointState struct {
	stopping bool
	// written is what the slice holds; nil until the first write.
	written *endpointConditions
}

type endpointConditions struct{ ready, serving, terminating bool }

// newEndpoints returns endpoints that write the slices with cfg, naming
// their port as port is named.
func newEndpoints(cfg *rest.Config, port corev1.ServicePort) (*endpoints, error) {
	cfg = rest.CopyConfig(cfg)
	// The API server warns on every write that FQDN endpoints are
	// deprecated; the stack knows, and the warnings would bury its output.
	cfg.WarningHandler = rest.NoWarnings{}
	client, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	return &endpoints{client: client, portName: port.Name, state: map[*Replica]*endpointState{}}, nil
}

// run follows the replicas' /readyz until ctx ends, writing a slice only
// when its conditions change.
func (e *endpoints) run(ctx context.Context) {
	for {
		select {
		case <-ctx.Done():
			return
		case <-time.After(probeInterval):
		}
		e.mu.Lock()
		rs := append([]*Replica(nil), e.replicas...)
		e.mu.Unlock()
		for _, r := range rs {
			_ = e.sync(ctx, r)
		}
	}
}

// add writes the slice of r, not Ready until its /readyz answers.
func (e *endpoints) add(ctx context.Context, r *Replica) error {
	e.mu.Lock()
	e.replicas = append(e.replicas, r)
	e.state[r] = &endpointState{}
	e.mu.Unlock()
	return e.sync(ctx, r)
}

// remove stops following r and deletes its slice, as the endpoints of a
// deleted Pod go.
func (e *endpoints) remove(ctx context.Context, r *Replica) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	for i, x := range e.replicas {
		if x == r {
			e.replicas = append(e.replicas[:i], e.replicas[i+1:]...)
			break
		}
	}
	delete(e.state, r)
	err := e.client.DiscoveryV1().EndpointSlices(Namespace).Delete(ctx, r.Name, metav1.DeleteOptions{})
	if apierrors.IsNotFound(err) {
		return nil
	}
	return err
}

// setStopping marks r as stopping, or no longer so, and writes the slice
// at once: a stopping replica gets no new connections from then on.
func (e *endpoints) setStopping(ctx context.Context, r *Replica, stopping bool) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	st := e.state[r]
	if st == nil {
		return errorf("%s has no endpoint", r.Name)
	}
	st.stopping = stopping
	serving := st.written != nil && st.written.serving
	return e.write(ctx, r, st, endpointConditions{ready: serving && !stopping, serving: serving, terminating: stopping})
}

// sync probes r and writes its slice if the conditions changed.
func (e *endpoints) sync(ctx context.Context, r *Replica) error {
	serving := r.Running() && r.Ready(ctx)
	e.mu.Lock()
	defer e.mu.Unlock()
	st := e.state[r]
	if st == nil {
		return nil // removed meanwhile
	}
	return e.write(ctx, r, st, endpointConditions{ready: serving && !st.stopping, serving: serving, terminating: st.stopping})
}

// write applies the slice of r unless it already holds c. The caller
// holds e.mu, so that a probe that started before setStopping cannot
// overwrite it.
func (e *endpoints) write(ctx context.Context, r *Replica, st *endpointState, c endpointConditions) error {
	if st.written != nil && *st.written == c {
		return nil
	}
	port, err := strconv.Atoi(portOf(r.WebhookAddr))
	if err != nil {
		return errorf("%s: webhook address %q: %w", r.Name, r.WebhookAddr, err)
	}
	slice := discoveryv1ac.EndpointSlice(r.Name, Namespace).
		WithLabels(map[string]string{
			discoveryv1.LabelServiceName: ServiceName,
			discoveryv1.LabelManagedBy:   EndpointSliceManager,
		}).
		WithAddressType(discoveryv1.AddressTypeFQDN).
		WithPorts(discoveryv1ac.EndpointPort().
			WithName(e.portName).
			WithPort(int32(port)). //nolint:gosec // a TCP port
			WithProtocol(corev1.ProtocolTCP)).
		WithEndpoints(discoveryv1ac.Endpoint().
			WithAddresses(EndpointAddress).
			WithConditions(discoveryv1ac.EndpointConditions().
				WithReady(c.ready).WithServing(c.serving).WithTerminating(c.terminating)).
			WithTargetRef(corev1ac.ObjectReference().WithKind("Pod").WithNamespace(Namespace).WithName(r.Name)))
	_, err = e.client.DiscoveryV1().EndpointSlices(Namespace).Apply(ctx, slice, metav1.ApplyOptions{FieldManager: EndpointSliceManager, Force: true})
	if err != nil {
		return errorf("write EndpointSlice %s: %w", r.Name, err)
	}
	st.written = &c
	return nil
}

// ready reports whether the slice of r holds a Ready endpoint.
func (e *endpoints) ready(r *Replica) bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	st := e.state[r]
	return st != nil && st.written != nil && st.written.ready
}

// EndpointSlices lists the EndpointSlices of the webhook's Service: one
// per webhook replica, managed by EndpointSliceManager, and the one
// kube-controller-manager keeps for the Service's selector, without
// endpoints, as the Pod objects of the replicas have no IP.
func (s *Stack) EndpointSlices(ctx context.Context) ([]discoveryv1.EndpointSlice, error) {
	list, err := s.Clientset.DiscoveryV1().EndpointSlices(Namespace).List(ctx, metav1.ListOptions{
		LabelSelector: discoveryv1.LabelServiceName + "=" + ServiceName,
	})
	if err != nil {
		return nil, err
	}
	return list.Items, nil
}

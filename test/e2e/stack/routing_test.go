package stack

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	admissionv1 "k8s.io/api/admission/v1"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"

	"github.com/kyma-project/kim-snatch/test/e2e/certmgmt"
	"github.com/kyma-project/kim-snatch/test/framework"
)

// routedLabel is what the test's webhook adds to every Pod it is asked
// about, so that a created Pod shows whether the API server called it.
const routedLabel = "routed"

// The stack relies on this: a kube-apiserver with aggregator routing calls
// the webhook of deploy/webhook's MutatingWebhookConfiguration, unchanged,
// at a Ready endpoint of an FQDN EndpointSlice with address 127.0.0.1,
// under the TLS name of the Service; and without a Ready endpoint, or
// without the Service, it fails open. The webhook here is a plain TLS
// server that labels every Pod, not snatch-webhook, so that the test is
// about the routing only.
func TestAPIServerCallsTheServiceAtALoopbackFQDNEndpoint(t *testing.T) {
	if testing.Short() {
		t.Skip("needs a control plane")
	}
	c := framework.New(t, framework.Options{AggregatorRouting: true})
	if c.External() {
		t.Skip("needs a control plane of its own")
	}
	ctx := context.Background()
	cs := c.Clientset
	m, err := RenderWebhookManifests()
	if err != nil {
		t.Fatal(err)
	}
	port, err := m.ServicePort()
	if err != nil {
		t.Fatal(err)
	}
	for ns, managed := range map[string]bool{Namespace: true, "routing": true} {
		if err := CreateNamespace(ctx, cs, ns, managed); err != nil {
			t.Fatal(err)
		}
	}

	// An IPv4 slice cannot hold the loopback address; that is why the
	// stack writes FQDN slices.
	_, err = cs.DiscoveryV1().EndpointSlices(Namespace).Create(ctx, &discoveryv1.EndpointSlice{
		ObjectMeta:  metav1.ObjectMeta{Name: "ipv4", Labels: map[string]string{discoveryv1.LabelServiceName: ServiceName}},
		AddressType: discoveryv1.AddressTypeIPv4,
		Endpoints:   []discoveryv1.Endpoint{{Addresses: []string{EndpointAddress}}},
	}, metav1.CreateOptions{})
	if !apierrors.IsInvalid(err) {
		t.Fatalf("an IPv4 EndpointSlice with %s: got %v, want Invalid", EndpointAddress, err)
	}

	issuer := &certmgmt.Issuer{Client: cs, Namespace: Namespace, Name: SecretName,
		DNSNames: []string{ServiceName + "." + Namespace + ".svc"}}
	cert, err := issuer.Renew(ctx)
	if err != nil {
		t.Fatal(err)
	}
	pair, err := tls.X509KeyPair(cert.CertPEM, cert.KeyPEM)
	if err != nil {
		t.Fatal(err)
	}
	var serverName atomic.Value
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		serverName.Store(r.TLS.ServerName)
		labelPod(t, w, r)
	}))
	srv.TLS = &tls.Config{Certificates: []tls.Certificate{pair}, MinVersion: tls.VersionTLS12}
	// The API server resolves the Service when it dials, and reuses a
	// kept-alive connection without resolving it again. One connection per
	// call makes each call show the routing of its moment.
	srv.Config.SetKeepAlivesEnabled(false)
	srv.StartTLS()
	t.Cleanup(srv.Close)

	if _, err := cs.CoreV1().Services(Namespace).Create(ctx, m.Service.DeepCopy(), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	e, err := newEndpoints(c.Config, port)
	if err != nil {
		t.Fatal(err)
	}
	r := &Replica{Name: "routing-0", WebhookAddr: srv.Listener.Addr().String()}
	e.state[r] = &endpointState{}
	if err := e.write(ctx, r, e.state[r], endpointConditions{ready: true, serving: true}); err != nil {
		t.Fatalf("the API server rejects the FQDN EndpointSlice with %s: %v", EndpointAddress, err)
	}
	mwc := m.Configuration.DeepCopy()
	for i := range mwc.Webhooks {
		mwc.Webhooks[i].ClientConfig.CABundle = cert.CertPEM
	}
	if _, err := cs.AdmissionregistrationV1().MutatingWebhookConfigurations().Create(ctx, mwc, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}

	waitRouted(t, cs, true, "with a Ready endpoint")
	if got := serverName.Load(); got != ServiceName+"."+Namespace+".svc" {
		t.Errorf("the API server asked for TLS name %v, want %s.%s.svc", got, ServiceName, Namespace)
	}

	if err := e.write(ctx, r, e.state[r], endpointConditions{serving: true, terminating: true}); err != nil {
		t.Fatal(err)
	}
	waitRouted(t, cs, false, "with the only endpoint not Ready")
	if err := e.write(ctx, r, e.state[r], endpointConditions{ready: true, serving: true}); err != nil {
		t.Fatal(err)
	}
	waitRouted(t, cs, true, "with the endpoint Ready again")

	if err := cs.CoreV1().Services(Namespace).Delete(ctx, ServiceName, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	waitRouted(t, cs, false, "without the Service")
}

// waitRouted creates Pods in the namespace "routing" until one comes back
// labelled by the webhook (routed) or not (!routed), as the API server
// learns of a change through its informers.
func waitRouted(t *testing.T, cs kubernetes.Interface, routed bool, what string) {
	t.Helper()
	n := 0
	err := wait.PollUntilContextTimeout(context.Background(), 100*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		n++
		pod, err := cs.CoreV1().Pods("routing").Create(ctx, &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{GenerateName: "routing-"},
			Spec: corev1.PodSpec{
				Containers:                    []corev1.Container{{Name: "app", Image: PauseImage}},
				TerminationGracePeriodSeconds: ptr.To(int64(0)),
			},
		}, metav1.CreateOptions{})
		if err != nil {
			return false, err
		}
		return (pod.Labels[routedLabel] == "true") == routed, nil
	})
	if err != nil {
		t.Fatalf("%s: after %d Pods, the API server still does not call the webhook as expected (want called: %v): %v", what, n, routed, err)
	}
}

// labelPod answers an AdmissionReview with a patch that labels the Pod.
func labelPod(t *testing.T, w http.ResponseWriter, r *http.Request) {
	var review admissionv1.AdmissionReview
	if err := json.NewDecoder(r.Body).Decode(&review); err != nil || review.Request == nil {
		t.Errorf("the API server sent no AdmissionReview: %v", err)
		http.Error(w, "no AdmissionReview", http.StatusBadRequest)
		return
	}
	patch, _ := json.Marshal([]map[string]any{{
		"op": "add", "path": "/metadata/labels", "value": map[string]string{routedLabel: "true"},
	}})
	review.Response = &admissionv1.AdmissionResponse{
		UID: review.Request.UID, Allowed: true,
		Patch: patch, PatchType: ptr.To(admissionv1.PatchTypeJSONPatch),
	}
	review.Request = nil
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(&review)
}

package kimsnatch_test

import (
	"bufio"
	"bytes"
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	admissionv1 "k8s.io/api/admission/v1"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	admissionregistrationv1ac "k8s.io/client-go/applyconfigurations/admissionregistration/v1"
	discoveryv1ac "k8s.io/client-go/applyconfigurations/discovery/v1"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/restmapper"

	"github.com/kyma-project/kim-snatch/pkg/certtest"
	"github.com/kyma-project/kim-snatch/test/e2e/kimsnatch"
	"github.com/kyma-project/kim-snatch/test/e2e/stack"
	"github.com/kyma-project/kim-snatch/test/framework"
	"github.com/kyma-project/kim-snatch/test/framework/poll"
)

const ns = kimsnatch.Namespace

func TestInventoryIsTheOldInstallation(t *testing.T) {
	objs, err := kimsnatch.Inventory()
	must(t, err)
	kinds := map[string]int{}
	for _, o := range objs {
		kinds[o.GetKind()]++
		if o.GetKind() == "CustomResourceDefinition" {
			if !strings.HasSuffix(o.GetName(), ".core.kyma-project.io") {
				t.Errorf("CustomResourceDefinition %s is not of group core.kyma-project.io", o.GetName())
			}
			continue
		}
		if !strings.HasPrefix(o.GetName(), "kim-snatch-") {
			t.Errorf("%s %s lacks the name prefix kim-snatch-", o.GetKind(), o.GetName())
		}
		if o.GetNamespace() != "" && o.GetNamespace() != ns {
			t.Errorf("%s %s is in namespace %s", o.GetKind(), o.GetName(), o.GetNamespace())
		}
	}
	want := map[string]int{"Deployment": 1, "Service": 2, "ServiceAccount": 1, "Role": 1, "RoleBinding": 1,
		"NetworkPolicy": 4, "ClusterRole": 3, "ClusterRoleBinding": 2, "PriorityClass": 1, "Certificate": 1,
		"MutatingWebhookConfiguration": 1, "CustomResourceDefinition": 2}
	if !apiequality.Semantic.DeepEqual(kinds, want) {
		t.Errorf("kinds = %v, want %v", kinds, want)
	}
}

func TestStandInBehavesAsTheOldKimSnatch(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a control plane")
	}
	c := framework.New(t, framework.Options{AggregatorRouting: true})
	cfg := rest.CopyConfig(c.Config)
	cfg.WarningHandler = rest.NoWarnings{} // FQDN EndpointSlices are deprecated
	cs := kubernetes.NewForConfigOrDie(cfg)
	must(t, stack.CreateNamespace(t.Context(), cs, ns, true))
	install(t, cfg, func(kind string) bool { return kind != "Certificate" }) // its CRD is not installed here
	dir := t.TempDir()
	issuer := certtest.Options{DNSNames: []string{kimsnatch.WebhookServiceName + "." + ns + ".svc"}}

	first := checkFallbackAnnotatesWithoutKymaNodes(t, cs, dir, issuer)
	k := checkStartForcesTheCABundleBack(t, c, cs, dir, issuer, first)
	checkTermAppendedToEveryAffinity(t, cs)
	checkRotationIsLoadedAndApplied(t, cs, k, dir, issuer)
	checkFailedLoadRestartsAndApplies(t, cfg, cs, k, dir, issuer)
	checkStopAnswersTheReviewInFlight(t, k)
}

// checkFallbackAnnotatesWithoutKymaNodes starts the stand-in with no Node
// of the Kyma pool: Pods are annotated instead. Nothing is served before a
// certificate is loaded. It returns the certificate loaded, and leaves the
// stand-in stopped.
func checkFallbackAnnotatesWithoutKymaNodes(t *testing.T, cs kubernetes.Interface, dir string, issuer certtest.Options) *certtest.Cert {
	t.Helper()
	k := start(t, cs, dir)
	if !k.Fallback() || k.Loads() != 0 {
		t.Fatalf("fallback = %v, loads = %d before any certificate", k.Fallback(), k.Loads())
	}
	if conn, err := tls.Dial("tcp", k.Addr(), &tls.Config{InsecureSkipVerify: true}); err == nil { //nolint:gosec // only the handshake matters
		_ = conn.Close()
		t.Fatal("handshake succeeded without a certificate")
	}
	route(t, cs, k.Addr())
	first := project(t, issuer, dir)
	poll.Eventually(t, "the first apply", counted(k, func() bool { return k.Applies() == 1 }), waitTimeout)
	checkMWC(t, cs, first.CertPEM)
	pod := admit(t, cs, newPod(nil), func(p *corev1.Pod) bool { return len(p.Annotations) > 0 })
	if pod.Annotations[kimsnatch.PoolLabel] != framework.KymaPool || pod.Spec.Affinity != nil {
		t.Fatalf("fallback Pod: annotations %v, affinity %+v", pod.Annotations, pod.Spec.Affinity)
	}
	pod = newPod(nil)
	pod.Annotations = map[string]string{"a": "b"}
	pod, err := cs.CoreV1().Pods(ns).Create(t.Context(), pod, metav1.CreateOptions{})
	must(t, err)
	if len(pod.Annotations) != 2 || pod.Annotations[kimsnatch.PoolLabel] != framework.KymaPool {
		t.Fatalf("fallback Pod with an annotation: annotations %v", pod.Annotations)
	}
	k.Stop()
	return first
}

// checkStartForcesTheCABundleBack adds a Node of the Kyma pool and lets
// another manager write the caBundle; the next start forces it back to
// current. It returns the stand-in started, serving the term.
func checkStartForcesTheCABundleBack(t *testing.T, c *framework.Cluster, cs kubernetes.Interface, dir string, issuer certtest.Options, current *certtest.Cert) *kimsnatch.KimSnatch {
	t.Helper()
	ctx := t.Context()
	_, err := c.CreateNodes(ctx, framework.KymaPool, 1)
	must(t, err)
	foreign := certtest.MustCA(t, issuer)
	ac := admissionregistrationv1ac.MutatingWebhookConfiguration(kimsnatch.DefaultWebhookConfigName).WithWebhooks(
		admissionregistrationv1ac.MutatingWebhook().WithName(kimsnatch.WebhookEntryName).WithClientConfig(
			admissionregistrationv1ac.WebhookClientConfig().WithCABundle(foreign.CertPEM...)))
	_, err = cs.AdmissionregistrationV1().MutatingWebhookConfigurations().Apply(ctx, ac, metav1.ApplyOptions{FieldManager: "intruder", Force: true})
	must(t, err)
	k := start(t, cs, dir)
	if k.Fallback() || k.Loads() != 1 || k.Applies() != 1 {
		t.Fatalf("fallback = %v, loads = %d, applies = %d after start", k.Fallback(), k.Loads(), k.Applies())
	}
	checkMWC(t, cs, current.CertPEM)
	route(t, cs, k.Addr())
	admit(t, cs, newPod(nil), func(p *corev1.Pod) bool { return p.Spec.Affinity != nil })
	return k
}

// checkTermAppendedToEveryAffinity checks that the term is appended to
// every shape of affinity, also next to itself.
func checkTermAppendedToEveryAffinity(t *testing.T, cs kubernetes.Interface) {
	t.Helper()
	other := corev1.PreferredSchedulingTerm{Weight: 50, Preference: corev1.NodeSelectorTerm{MatchExpressions: []corev1.NodeSelectorRequirement{
		{Key: "disk", Operator: corev1.NodeSelectorOpIn, Values: []string{"ssd"}}}}}
	for name, affinity := range map[string]*corev1.Affinity{
		"none":                   nil,
		"pod anti-affinity":      {PodAntiAffinity: &corev1.PodAntiAffinity{PreferredDuringSchedulingIgnoredDuringExecution: []corev1.WeightedPodAffinityTerm{{Weight: 1, PodAffinityTerm: corev1.PodAffinityTerm{TopologyKey: corev1.LabelHostname}}}}},
		"required node term":     {NodeAffinity: &corev1.NodeAffinity{RequiredDuringSchedulingIgnoredDuringExecution: &corev1.NodeSelector{NodeSelectorTerms: []corev1.NodeSelectorTerm{other.Preference}}}},
		"another preferred":      {NodeAffinity: &corev1.NodeAffinity{PreferredDuringSchedulingIgnoredDuringExecution: []corev1.PreferredSchedulingTerm{other}}},
		"the term already there": {NodeAffinity: &corev1.NodeAffinity{PreferredDuringSchedulingIgnoredDuringExecution: []corev1.PreferredSchedulingTerm{kymaTerm()}}},
	} {
		got, err := cs.CoreV1().Pods(ns).Create(t.Context(), newPod(affinity), metav1.CreateOptions{})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		want := &corev1.Affinity{}
		if affinity != nil {
			want = affinity.DeepCopy()
		}
		if want.NodeAffinity == nil {
			want.NodeAffinity = &corev1.NodeAffinity{}
		}
		want.NodeAffinity.PreferredDuringSchedulingIgnoredDuringExecution = append(want.NodeAffinity.PreferredDuringSchedulingIgnoredDuringExecution, kymaTerm())
		if !apiequality.Semantic.DeepEqual(got.Spec.Affinity, want) {
			t.Errorf("%s: affinity = %+v, want %+v", name, got.Spec.Affinity, want)
		}
	}
}

// checkRotationIsLoadedAndApplied projects a new certificate: it is loaded,
// served, and written alone to the MWC.
func checkRotationIsLoadedAndApplied(t *testing.T, cs kubernetes.Interface, k *kimsnatch.KimSnatch, dir string, issuer certtest.Options) {
	t.Helper()
	second := project(t, issuer, dir)
	poll.Eventually(t, "the rotation's apply", counted(k, func() bool { return k.Loads() == 2 && k.Applies() == 2 }), waitTimeout)
	checkMWC(t, cs, second.CertPEM)
	admit(t, cs, newPod(nil), func(p *corev1.Pod) bool { return p.Spec.Affinity != nil })
}

// checkFailedLoadRestartsAndApplies deletes the MWC, so a load fails: the
// old binary exited, and wrote the MWC at its restart once the MWC was
// back.
func checkFailedLoadRestartsAndApplies(t *testing.T, cfg *rest.Config, cs kubernetes.Interface, k *kimsnatch.KimSnatch, dir string, issuer certtest.Options) {
	t.Helper()
	must(t, cs.AdmissionregistrationV1().MutatingWebhookConfigurations().Delete(t.Context(), kimsnatch.DefaultWebhookConfigName, metav1.DeleteOptions{}))
	third := project(t, issuer, dir)
	poll.Eventually(t, "a failed load", counted(k, func() bool { return k.Restarts() > 0 }), waitTimeout)
	install(t, cfg, func(kind string) bool { return kind == "MutatingWebhookConfiguration" })
	poll.Eventually(t, "the apply after the restart", counted(k, func() bool { return k.Applies() == 3 }), waitTimeout)
	checkMWC(t, cs, third.CertPEM)
}

// checkStopAnswersTheReviewInFlight sends a review's headers and half its
// body, stops the stand-in once the review's handling has begun, and sends the rest once the listener is
// closed: the review is answered, as the old binary's webhook server
// answered the calls in flight when its Pod was deleted.
func checkStopAnswersTheReviewInFlight(t *testing.T, k *kimsnatch.KimSnatch) {
	t.Helper()
	pod, err := json.Marshal(newPod(nil))
	must(t, err)
	review, err := json.Marshal(admissionv1.AdmissionReview{
		TypeMeta: metav1.TypeMeta{APIVersion: "admission.k8s.io/v1", Kind: "AdmissionReview"},
		Request: &admissionv1.AdmissionRequest{
			UID: "in-flight", Namespace: ns, Operation: admissionv1.Create,
			Kind:     metav1.GroupVersionKind{Version: "v1", Kind: "Pod"},
			Resource: metav1.GroupVersionResource{Version: "v1", Resource: "pods"},
			Object:   runtime.RawExtension{Raw: pod},
		},
	})
	must(t, err)
	conn, err := tls.Dial("tcp", k.Addr(), &tls.Config{InsecureSkipVerify: true}) //nolint:gosec // the review's answer is what matters
	must(t, err)
	defer func() { _ = conn.Close() }()
	head := "POST " + kimsnatch.Path + " HTTP/1.1\r\nHost: kim-snatch\r\nContent-Type: application/json\r\nContent-Length: " +
		strconv.Itoa(len(review)) + "\r\n\r\n"
	half, begun := len(review)/2, k.Reviews()
	_, err = conn.Write(append([]byte(head), review[:half]...))
	must(t, err)
	poll.Eventually(t, "the review's handling to begin", counted(k, func() bool { return k.Reviews() > begun }), waitTimeout)

	stopped := make(chan struct{})
	go func() { defer close(stopped); k.Stop() }()
	poll.Eventually(t, "the listener to close", func(context.Context) error {
		c, err := net.DialTimeout("tcp", k.Addr(), time.Second)
		if err != nil {
			return nil
		}
		_ = c.Close()
		return errors.New("the listener still accepts connections")
	}, waitTimeout)
	_, err = conn.Write(review[half:])
	must(t, err)
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatalf("the review in flight at Stop got no answer: %v", err)
	}
	defer func() { _ = resp.Body.Close() }()
	var got admissionv1.AdmissionReview
	if err := json.NewDecoder(resp.Body).Decode(&got); err != nil || resp.StatusCode != http.StatusOK ||
		got.Response == nil || !got.Response.Allowed || len(got.Response.Patch) == 0 {
		t.Fatalf("the review in flight at Stop: status %d, response %+v, decode error %v", resp.StatusCode, got.Response, err)
	}
	<-stopped
}

func kymaTerm() corev1.PreferredSchedulingTerm {
	return corev1.PreferredSchedulingTerm{Weight: 10, Preference: corev1.NodeSelectorTerm{MatchExpressions: []corev1.NodeSelectorRequirement{
		{Key: "worker.gardener.cloud/pool", Operator: corev1.NodeSelectorOpIn, Values: []string{framework.KymaPool}}}}}
}

func newPod(affinity *corev1.Affinity) *corev1.Pod {
	return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{GenerateName: "p-", Namespace: ns}, Spec: corev1.PodSpec{
		Affinity:   affinity,
		Containers: []corev1.Container{{Name: "c", Image: "registry.k8s.io/pause:3.10"}},
	}}
}

func start(t *testing.T, cs kubernetes.Interface, dir string) *kimsnatch.KimSnatch {
	t.Helper()
	k, err := kimsnatch.Start(t.Context(), kimsnatch.Options{Client: cs, CertDir: dir, RestartDelay: 200 * time.Millisecond})
	must(t, err)
	t.Cleanup(k.Stop)
	return k
}

// install creates the old installation's objects of the kinds wanted.
func install(t *testing.T, cfg *rest.Config, want func(kind string) bool) {
	t.Helper()
	objs, err := kimsnatch.Inventory()
	must(t, err)
	dyn := dynamic.NewForConfigOrDie(cfg)
	mapper := restmapper.NewDeferredDiscoveryRESTMapper(memory.NewMemCacheClient(kubernetes.NewForConfigOrDie(cfg).Discovery()))
	for _, o := range objs {
		gvk := o.GroupVersionKind()
		if !want(gvk.Kind) {
			continue
		}
		m, err := mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
		if err == nil {
			_, err = dyn.Resource(m.Resource).Namespace(o.GetNamespace()).Create(t.Context(), o, metav1.CreateOptions{})
		}
		if err != nil {
			t.Fatalf("create %s %s: %v", gvk.Kind, o.GetName(), err)
		}
	}
}

// route points the old webhook Service at addr, as the endpointslice
// controller would at a ready Pod; the API server dials it with
// aggregator routing.
func route(t *testing.T, cs kubernetes.Interface, addr string) {
	t.Helper()
	svc, err := cs.CoreV1().Services(ns).Get(t.Context(), kimsnatch.WebhookServiceName, metav1.GetOptions{})
	must(t, err)
	_, p, _ := net.SplitHostPort(addr)
	port, _ := strconv.Atoi(p)
	slice := discoveryv1ac.EndpointSlice("kim-snatch-stand-in", ns).
		WithLabels(map[string]string{discoveryv1.LabelServiceName: svc.Name, discoveryv1.LabelManagedBy: "kimsnatch-test"}).
		WithAddressType(discoveryv1.AddressTypeFQDN).
		WithPorts(discoveryv1ac.EndpointPort().WithName(svc.Spec.Ports[0].Name).WithPort(int32(port)).WithProtocol(corev1.ProtocolTCP)). //nolint:gosec // a TCP port
		WithEndpoints(discoveryv1ac.Endpoint().WithAddresses("127.0.0.1").WithConditions(discoveryv1ac.EndpointConditions().WithReady(true)))
	_, err = cs.DiscoveryV1().EndpointSlices(ns).Apply(t.Context(), slice, metav1.ApplyOptions{FieldManager: "kimsnatch-test", Force: true})
	must(t, err)
}

// project issues a certificate and writes it into dir as the kubelet
// writes a Secret volume: a new directory, then an atomic ..data swap.
func project(t *testing.T, issuer certtest.Options, dir string) *certtest.Cert {
	t.Helper()
	c := certtest.MustCA(t, issuer)
	certtest.MustWriteAtomic(t, dir, c.Files())
	return c
}

// checkMWC checks that every entry's caBundle is ca alone, and that only
// the field manager snatch, by an apply, owns it.
func checkMWC(t *testing.T, cs kubernetes.Interface, ca []byte) {
	t.Helper()
	mwc, err := cs.AdmissionregistrationV1().MutatingWebhookConfigurations().Get(t.Context(), kimsnatch.DefaultWebhookConfigName, metav1.GetOptions{})
	must(t, err)
	for _, w := range mwc.Webhooks {
		if !bytes.Equal(w.ClientConfig.CABundle, ca) {
			t.Errorf("entry %s: caBundle is not the current ca.crt", w.Name)
		}
	}
	var owners []string
	for _, f := range mwc.ManagedFields {
		if f.FieldsV1 != nil && strings.Contains(f.FieldsV1.GetRawString(), `"f:caBundle"`) {
			owners = append(owners, f.Manager+"/"+string(f.Operation))
		}
	}
	if len(owners) != 1 || owners[0] != "snatch/Apply" {
		t.Errorf("caBundle owned by %v, want [snatch/Apply]", owners)
	}
}

// admit creates pod until the API server returns it with done true, as
// it does once it calls the stand-in with the current caBundle.
func admit(t *testing.T, cs kubernetes.Interface, pod *corev1.Pod, done func(*corev1.Pod) bool) *corev1.Pod {
	t.Helper()
	var got *corev1.Pod
	poll.Eventually(t, "a Pod admitted through the stand-in", func(ctx context.Context) error {
		p, err := cs.CoreV1().Pods(ns).Create(ctx, pod.DeepCopy(), metav1.CreateOptions{})
		if err != nil {
			return poll.Stop(err)
		}
		if done(p) {
			got = p
			return nil
		}
		if err := cs.CoreV1().Pods(ns).Delete(ctx, p.Name, metav1.DeleteOptions{}); err != nil {
			return poll.Stop(err)
		}
		return fmt.Errorf("a Pod came back with annotations %v and affinity %+v", p.Annotations, p.Spec.Affinity)
	}, waitTimeout)
	return got
}

// waitTimeout bounds the waits for the stand-in and the API server.
var waitTimeout = poll.Timeout(time.Minute)

// counted returns a condition that holds once ok does, and otherwise
// reports the stand-in's counts.
func counted(k *kimsnatch.KimSnatch, ok func() bool) poll.Condition {
	return func(context.Context) error {
		if !ok() {
			return fmt.Errorf("loads %d, applies %d, restarts %d, reviews %d", k.Loads(), k.Applies(), k.Restarts(), k.Reviews())
		}
		return nil
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

package main

import (
	"context"
	"crypto/tls"
	"errors"
	"flag"
	"fmt"
	"hash/fnv"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/rand"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"

	"github.com/kyma-project/kim-snatch/pkg/admission"
	"github.com/kyma-project/kim-snatch/pkg/affinity"
	"github.com/kyma-project/kim-snatch/pkg/certtest"
	"github.com/kyma-project/kim-snatch/pkg/check"
	"github.com/kyma-project/kim-snatch/pkg/check/checktest"
	"github.com/kyma-project/kim-snatch/test/framework"
	"github.com/kyma-project/kim-snatch/test/framework/objects"
	"github.com/kyma-project/kim-snatch/test/process"
	"github.com/kyma-project/kim-snatch/test/tools"
)

// What the skew test of skew_test.go needs around the released manifests:
// their rendering by hack/release/release.sh, and the parts of a cluster that the
// control plane of test/framework lacks, each played as the component that
// owns it would play it.

// release is the install.yaml of one release, as hack/release/release.sh renders it.
type release struct {
	binary, version, path string
	objects               []*unstructured.Unstructured
}

// renderReleases renders the manifests of each binary at its version
// with `hack/release/release.sh --manifests` (docs/releasing.md, "Cutting a
// release"), the one rendering of a release that the tooling offers
// without its checks and builds, and decodes each install.yaml. They
// render while the caller goes on; wait returns them in the order of
// versions.
func renderReleases(t *testing.T, kubectl string, versions ...[2]string) (wait func() []*release) {
	t.Helper()
	root := tools.MustRepoRoot(t)
	out, errs := make([]*release, len(versions)), make([]error, len(versions))
	var wg sync.WaitGroup
	for i, bv := range versions {
		dir := filepath.Join(t.TempDir(), bv[0], bv[1])
		wg.Go(func() { out[i], errs[i] = renderRelease(root, kubectl, bv[0], bv[1], dir) })
	}
	t.Cleanup(wg.Wait) // before the folders go, should t end first
	return func() []*release {
		t.Helper()
		wg.Wait()
		if err := errors.Join(errs...); err != nil {
			t.Fatal(err)
		}
		return out
	}
}

// renderRelease renders the release of binary at version into dir and
// decodes its install.yaml.
func renderRelease(root, kubectl, binary, version, dir string) (*release, error) {
	render := process.Command{Env: []string{"KUBECTL=" + kubectl}}
	if _, err := render.Run(context.Background(), filepath.Join(root, "hack", "release", "release.sh"), "--manifests", dir, binary, version); err != nil {
		return nil, err
	}
	r := &release{binary: binary, version: version, path: filepath.Join(dir, "install.yaml")}
	data, err := os.ReadFile(r.path)
	if err != nil {
		return nil, err
	}
	if r.objects, err = objects.Decode(data); err != nil {
		return nil, fmt.Errorf("%s: %w", r.path, err)
	}
	return r, nil
}

// one decodes the release's only object of kind into out.
func (r *release) one(t *testing.T, kind string, out any) {
	t.Helper()
	var found []*unstructured.Unstructured
	for _, o := range r.objects {
		if o.GetKind() == kind {
			found = append(found, o)
		}
	}
	if len(found) != 1 {
		t.Fatalf("%s %s: %d objects of kind %s, want one", r.binary, r.version, len(found), kind)
	}
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(found[0].Object, out); err != nil {
		t.Fatalf("%s %s: %s: %v", r.binary, r.version, kind, err)
	}
}

// deployment is the release's Deployment, and its image the version.
func (r *release) deployment(t *testing.T) *appsv1.Deployment {
	t.Helper()
	var d appsv1.Deployment
	r.one(t, "Deployment", &d)
	if img := d.Spec.Template.Spec.Containers[0].Image; !strings.HasSuffix(img, ":"+r.version) {
		t.Fatalf("%s %s: the Deployment runs %s, not the version's image", r.binary, r.version, img)
	}
	return &d
}

// skewCluster is a control plane of test/framework holding released
// manifests, and kubectl for it.
type skewCluster struct {
	*framework.Cluster
	cs    kubernetes.Interface
	nodes []string // the Kyma pool
}

// kubectlRun runs kubectl with args against the cluster, as the admin.
func (c *skewCluster) kubectlRun(t *testing.T, args ...string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if _, err := framework.RunKubectl(ctx, framework.KubectlOptions{Kubeconfig: c.KubeconfigPath}, args...); err != nil {
		t.Fatal(err)
	}
}

// prepare makes the cluster a Kyma runtime before KIM Snatch: the CRDs of
// cert-management and prometheus-operator that install.yaml uses, as
// test/docs installs them, the namespace kyma-system, which Kyma creates
// and manages, and Nodes of the Kyma pool.
func (c *skewCluster) prepare(t *testing.T, namespace string) {
	t.Helper()
	root := tools.MustRepoRoot(t)
	c.kubectlRun(t, "apply", "--server-side", "-f", filepath.Join(root, "test", "manifests", "testdata", "crds"))
	c.kubectlRun(t, "wait", "--for=condition=Established", "crd", "--all", "--timeout=60s")
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: namespace, Labels: map[string]string{check.ManagedByLabel: check.ManagedByValue}}}
	if _, err := c.cs.CoreV1().Namespaces().Create(context.Background(), ns, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	nodes, err := c.CreateNodes(context.Background(), framework.KymaPool, 2)
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range nodes {
		c.nodes = append(c.nodes, n.Name)
	}
}

// install applies the release as docs/operations.md installs and upgrades
// one: kubectl apply --server-side -f install.yaml.
func (c *skewCluster) install(t *testing.T, r *release) {
	t.Helper()
	c.kubectlRun(t, "apply", "--server-side", "-f", r.path)
}

// settleQuotas writes each ResourceQuota's status as kube-controller-
// manager's quota controller, which does not run here, first writes it:
// until then the quota admission refuses every Pod of its namespace, the
// admission item's dry run included.
func (c *skewCluster) settleQuotas(t *testing.T) {
	t.Helper()
	ctx := context.Background()
	quotas, err := c.cs.CoreV1().ResourceQuotas(metav1.NamespaceAll).List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for i := range quotas.Items {
		q := &quotas.Items[i]
		q.Status.Hard, q.Status.Used = q.Spec.Hard.DeepCopy(), corev1.ResourceList{}
		for name := range q.Spec.Hard {
			q.Status.Used[name] = resource.MustParse("0")
		}
		if _, err := c.cs.CoreV1().ResourceQuotas(q.Namespace).UpdateStatus(ctx, q, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
}

// rollPods replaces the Pods of Deployment d's earlier templates with
// those of its template, as its ReplicaSet, the scheduler and the kubelets
// would at the end of a rollout: named and labelled by the template's
// hash, bound to the Kyma pool's Nodes in turn, Running and Ready. It
// returns the new Pods.
func (c *skewCluster) rollPods(t *testing.T, d *appsv1.Deployment) []*corev1.Pod {
	t.Helper()
	ctx := context.Background()
	pods := c.cs.CoreV1().Pods(d.Namespace)
	sel := labels.SelectorFromSet(d.Spec.Selector.MatchLabels).String()
	grace := metav1.DeleteOptions{GracePeriodSeconds: ptr.To[int64](0)}
	if err := pods.DeleteCollection(ctx, grace, metav1.ListOptions{LabelSelector: sel}); err != nil {
		t.Fatal(err)
	}
	hash := templateHash(t, &d.Spec.Template)
	var out []*corev1.Pod
	for i := range int(ptr.Deref(d.Spec.Replicas, 1)) {
		name := fmt.Sprintf("%s-%s-%s", d.Name, hash, rand.String(5))
		p := checktest.RunningPod(d.Namespace, name, nil)
		p.Labels = labels.Merge(d.Spec.Template.Labels, map[string]string{appsv1.DefaultDeploymentUniqueLabelKey: hash})
		p.Annotations = d.Spec.Template.Annotations
		p.Spec = *d.Spec.Template.Spec.DeepCopy()
		p.Spec.NodeName = c.nodes[i%len(c.nodes)]
		if err := checktest.CreatePod(ctx, c.cs, p); err != nil {
			t.Fatal(err)
		}
		out = append(out, p)
	}
	return out
}

// templateHash names a Pod template, as pod-template-hash does.
func templateHash(t *testing.T, tmpl *corev1.PodTemplateSpec) string {
	t.Helper()
	data, err := tmpl.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	h := fnv.New32a()
	_, _ = h.Write(data)
	return rand.SafeEncodeString(fmt.Sprint(h.Sum32()))
}

// serviceAccountKubeconfig writes a kubeconfig that authenticates as the
// ServiceAccount namespace/name with a token of TokenRequest, as a Pod
// that runs under it does.
func (c *skewCluster) serviceAccountKubeconfig(t *testing.T, namespace, name string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), name+".kubeconfig")
	if err := framework.WriteServiceAccountKubeconfig(context.Background(), c.cs, c.KubeconfigPath, namespace, name, time.Hour, path); err != nil {
		t.Fatal(err)
	}
	return path
}

// containerEnv resolves the environment of Pod p's first container as the
// kubelet does for values and for the Pod's name and namespace, and
// returns it with the container's args, $(VAR) expanded.
func containerEnv(p *corev1.Pod) (env, args []string) {
	fields := map[string]string{"metadata.name": p.Name, "metadata.namespace": p.Namespace}
	ctr := p.Spec.Containers[0]
	var expand []string
	for _, e := range ctr.Env {
		v := e.Value
		if e.ValueFrom != nil && e.ValueFrom.FieldRef != nil {
			v = fields[e.ValueFrom.FieldRef.FieldPath]
		}
		env = append(env, e.Name+"="+v)
		expand = append(expand, "$("+e.Name+")", v)
	}
	r := strings.NewReplacer(expand...)
	for _, a := range ctr.Args {
		args = append(args, r.Replace(a))
	}
	return env, args
}

// certManagementSecret writes the Secret that cert-management issues for
// the webhook's Certificate: its self-signed CA, valid for the
// Certificate's names, as tls.crt, tls.key and ca.crt.
func (c *skewCluster) certManagementSecret(t *testing.T, r *release) *certtest.Cert {
	t.Helper()
	var cert struct {
		Spec struct {
			CommonName string   `json:"commonName"`
			DNSNames   []string `json:"dnsNames"`
			SecretRef  struct {
				Name      string `json:"name"`
				Namespace string `json:"namespace"`
			} `json:"secretRef"`
		} `json:"spec"`
	}
	r.one(t, "Certificate", &cert)
	ca := certtest.MustCA(t, certtest.Options{CommonName: cert.Spec.CommonName, DNSNames: cert.Spec.DNSNames})
	secret := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Namespace: cert.Spec.SecretRef.Namespace, Name: cert.Spec.SecretRef.Name},
		Type:       corev1.SecretTypeTLS,
		Data:       ca.Files(),
	}
	if _, err := c.cs.CoreV1().Secrets(secret.Namespace).Create(context.Background(), secret, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	return ca
}

// skewWebhook is snatch-webhook's admission handler (pkg/admission) served
// on loopback, configured from the args of a release's Deployment, behind
// the Service its MutatingWebhookConfiguration calls. The API server
// reaches it through EndpointSlices of that Service, as it does with
// aggregator routing; kube-proxy and a kubelet are not needed.
type skewWebhook struct {
	addr    string
	path    string
	handler atomic.Pointer[admission.Handler]
}

// serveWebhook listens with the serving certificate cert until t ends.
func serveWebhook(t *testing.T, mwc *admissionregistrationv1.MutatingWebhookConfiguration, cert *certtest.Cert) *skewWebhook {
	t.Helper()
	w := &skewWebhook{path: ptr.Deref(mwc.Webhooks[0].ClientConfig.Service.Path, "/")}
	l, err := tls.Listen("tcp", "127.0.0.1:0", &tls.Config{Certificates: []tls.Certificate{cert.TLSCertificate()},
		MinVersion: tls.VersionTLS12})
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: w, ReadHeaderTimeout: 5 * time.Second}
	go func() { _ = srv.Serve(l) }()
	t.Cleanup(func() { _ = srv.Close() })
	w.addr = l.Addr().String()
	return w
}

func (w *skewWebhook) ServeHTTP(rw http.ResponseWriter, r *http.Request) {
	h := w.handler.Load()
	if r.URL.Path != w.path || h == nil {
		http.NotFound(rw, r)
		return
	}
	h.ServeHTTP(rw, r)
}

// configure makes the handler the one of the flags of the webhook's
// container args, and returns its policy.
func (w *skewWebhook) configure(t *testing.T, args []string) affinity.Policy {
	t.Helper()
	p := policyOf(t, args)
	m, err := affinity.NewMutator(p)
	if err != nil {
		t.Fatal(err)
	}
	h, err := admission.NewHandler(admission.Options{Mutator: m})
	if err != nil {
		t.Fatal(err)
	}
	w.handler.Store(h)
	return p
}

// policyOf reads the policy flags (affinity.BindFlags) from args in the
// --name=value form that deploy/ writes, leaving every other flag to the
// binary that has it.
func policyOf(t *testing.T, args []string) affinity.Policy {
	t.Helper()
	p := affinity.DefaultPolicy()
	fs := flag.NewFlagSet("snatch-webhook", flag.ContinueOnError)
	p.BindFlags(fs)
	for _, a := range args {
		name, value, ok := strings.Cut(strings.TrimLeft(a, "-"), "=")
		if ok && fs.Lookup(name) != nil {
			if err := fs.Set(name, value); err != nil {
				t.Fatalf("%s: %v", a, err)
			}
		}
	}
	return p
}

// publish points the webhook Service at the webhook, one ready endpoint
// per Pod of pods, replacing the endpoints of earlier Pods, as the
// EndpointSlice controller would.
func (c *skewCluster) publish(t *testing.T, w *skewWebhook, svc *corev1.Service, pods []*corev1.Pod) {
	t.Helper()
	ctx := context.Background()
	slices := c.cs.DiscoveryV1().EndpointSlices(svc.Namespace)
	sel := labels.SelectorFromSet(labels.Set{"kubernetes.io/service-name": svc.Name}).String()
	if err := slices.DeleteCollection(ctx, metav1.DeleteOptions{}, metav1.ListOptions{LabelSelector: sel}); err != nil {
		t.Fatal(err)
	}
	for _, p := range pods {
		if _, err := slices.Create(ctx, checktest.EndpointSlice(svc, p.Name, w.addr), metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
}

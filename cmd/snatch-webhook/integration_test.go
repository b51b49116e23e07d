package main

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"github.com/go-logr/logr"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/go-logr/logr/testr"
	"github.com/prometheus/client_golang/prometheus"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"

	"github.com/kyma-project/kim-snatch/pkg/admission"
	"github.com/kyma-project/kim-snatch/pkg/affinity"
	"github.com/kyma-project/kim-snatch/pkg/certtest"
	"github.com/kyma-project/kim-snatch/pkg/serving"
	"github.com/kyma-project/kim-snatch/test/framework"
	"github.com/kyma-project/kim-snatch/test/framework/poll"
	"github.com/kyma-project/kim-snatch/test/process"
)

// eventually bounds waits on eventual consistency; nothing here asserts a
// duration.
const eventually = 60 * time.Second

const (
	managedByLabel = "operator.kyma-project.io/managed-by"
	mwcName        = "kim-snatch-mutating-webhook-configuration"
)

// webhookProcess is the webhook as run by run(), in this process.
type webhookProcess struct {
	srv     *serving.Server
	reg     *prometheus.Registry
	url     string
	probe   string
	cancel  context.CancelFunc
	stopped chan error
}

func startWebhook(t *testing.T, certDir string) *webhookProcess {
	t.Helper()
	return startWebhookWith(t, certDir, testr.New(t))
}

// startWebhookWith is startWebhook with log as the webhook's logger.
func startWebhookWith(t testing.TB, certDir string, log logr.Logger) *webhookProcess {
	t.Helper()
	o := defaultOptions()
	o.CertDir = certDir
	o.ShutdownDelay = 0
	o.webhookHost, o.WebhookPort = "127.0.0.1", 0
	o.HealthProbeBindAddress, o.MetricsBindAddress = "127.0.0.1:0", "0"
	reg := prometheus.NewRegistry()
	srv, err := newServer(o, log, reg)
	if err != nil {
		t.Fatal(err)
	}
	if err := srv.Listen(); err != nil {
		t.Fatal(err)
	}
	webhookAddr, probeAddr, _ := srv.Addr()
	ctx, cancel := context.WithCancel(context.Background())
	w := &webhookProcess{srv: srv, reg: reg, url: "https://" + webhookAddr.String(), probe: "http://" + probeAddr.String(),
		cancel: cancel, stopped: make(chan error, 1)}
	go func() { w.stopped <- srv.Serve(ctx) }()
	t.Cleanup(func() { w.stop(t) })
	return w
}

func (w *webhookProcess) stop(t testing.TB) {
	t.Helper()
	if w.cancel == nil {
		return
	}
	w.cancel()
	w.cancel = nil
	select {
	case err := <-w.stopped:
		if err != nil {
			t.Errorf("webhook stopped with %v", err)
		}
	case <-time.After(eventually):
		t.Error("webhook did not stop")
	}
}

func (w *webhookProcess) counter(t *testing.T, outcome, reason string) float64 {
	t.Helper()
	families, err := w.reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range families {
		if f.GetName() != "snatch_webhook_admission_total" {
			continue
		}
		for _, m := range f.GetMetric() {
			labels := map[string]string{}
			for _, lp := range m.GetLabel() {
				labels[lp.GetName()] = lp.GetValue()
			}
			if labels["outcome"] == outcome && labels["reason"] == reason {
				return m.GetCounter().GetValue()
			}
		}
	}
	t.Fatalf("no snatch_webhook_admission_total{outcome=%q,reason=%q}", outcome, reason)
	return 0
}

// registerWebhook creates the MutatingWebhookConfiguration as deploy/webhook
// shapes it, with a url clientConfig since the webhook runs in the test, and
// the longest timeout the API allows instead of the shipped one: the tests
// assert what the webhook answers, also to a review of 18 MiB on a machine
// busy with other suites; make bench measures how fast.
func registerWebhook(ctx context.Context, t *testing.T, cs kubernetes.Interface, url string, caBundle []byte) {
	t.Helper()
	mwc := &admissionregistrationv1.MutatingWebhookConfiguration{
		ObjectMeta: metav1.ObjectMeta{Name: mwcName},
		Webhooks: []admissionregistrationv1.MutatingWebhook{{
			Name:                    "pods.kim-snatch.kyma-project.io",
			AdmissionReviewVersions: []string{"v1"},
			ClientConfig:            admissionregistrationv1.WebhookClientConfig{URL: ptr.To(url + "/mutate-pod"), CABundle: caBundle},
			Rules: []admissionregistrationv1.RuleWithOperations{{
				Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.Create},
				Rule: admissionregistrationv1.Rule{
					APIGroups: []string{""}, APIVersions: []string{"v1"}, Resources: []string{"pods"},
					Scope: ptr.To(admissionregistrationv1.NamespacedScope),
				},
			}},
			NamespaceSelector: &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{
				{Key: managedByLabel, Operator: metav1.LabelSelectorOpIn, Values: []string{"kyma"}},
				{Key: "kubernetes.io/metadata.name", Operator: metav1.LabelSelectorOpNotIn, Values: []string{"kube-system"}},
			}},
			ObjectSelector: &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{
				{Key: affinity.OptOutLabel, Operator: metav1.LabelSelectorOpNotIn, Values: []string{affinity.OptOutValue}},
			}},
			FailurePolicy:      ptr.To(admissionregistrationv1.Ignore),
			MatchPolicy:        ptr.To(admissionregistrationv1.Equivalent),
			SideEffects:        ptr.To(admissionregistrationv1.SideEffectClassNone),
			ReinvocationPolicy: ptr.To(admissionregistrationv1.NeverReinvocationPolicy),
			TimeoutSeconds:     ptr.To[int32](30),
		}},
	}
	if _, err := cs.AdmissionregistrationV1().MutatingWebhookConfigurations().Create(ctx, mwc, metav1.CreateOptions{}); err != nil {
		t.Fatalf("create the MutatingWebhookConfiguration: %v", err)
	}
}

func createNamespace(ctx context.Context, t *testing.T, cs kubernetes.Interface, name string, labels map[string]string) {
	t.Helper()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels}}
	if _, err := cs.CoreV1().Namespaces().Create(ctx, ns, metav1.CreateOptions{}); err != nil {
		t.Fatalf("create namespace %s: %v", name, err)
	}
}

func testPod(name string) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{
			Name: "app", Image: "europe-docker.pkg.dev/kyma-project/prod/app:1.0.0",
		}}},
	}
}

// poolTerms returns the preferred terms that use the pool key.
func poolTerms(pod *corev1.Pod) []corev1.PreferredSchedulingTerm {
	var out []corev1.PreferredSchedulingTerm
	if pod.Spec.Affinity == nil || pod.Spec.Affinity.NodeAffinity == nil {
		return nil
	}
	for _, term := range pod.Spec.Affinity.NodeAffinity.PreferredDuringSchedulingIgnoredDuringExecution {
		for _, e := range term.Preference.MatchExpressions {
			if e.Key == affinity.DefaultPoolLabelKey {
				out = append(out, term)
				break
			}
		}
	}
	return out
}

func isOurTerm(term corev1.PreferredSchedulingTerm) bool {
	e := term.Preference.MatchExpressions
	return term.Weight == 10 && len(e) == 1 && e[0].Key == "worker.gardener.cloud/pool" &&
		e[0].Operator == corev1.NodeSelectorOpIn && len(e[0].Values) == 1 && e[0].Values[0] == "cpu-worker-0"
}

// The webhook registered with a real API server, and Pods created through
// it: each subtest is one way a Pod reaches the webhook, in the order they
// change the webhook's state.
func TestWebhookBehindARealAPIServerMutatesOnlyManagedPodsAndFailsOpen(t *testing.T) {
	e := startBehindAPIServer(t)
	t.Run("dry_run_server_shows_the_mutation", e.dryRunShowsTheMutation)
	t.Run("managed_namespace_pod_gets_exactly_one_term", e.managedPodGetsExactlyOneTerm)
	t.Run("unlabelled_namespace_pod_gets_none", e.unlabelledPodGetsNone)
	t.Run("own_preferred_term_on_the_pool_key_is_unchanged", e.ownTermIsUnchanged)
	t.Run("opted_out_pod_is_not_mutated", e.optedOutPodIsNotMutated)
	t.Run("pod_of_3_mib_of_escaped_bytes_gets_the_term", e.hugePodGetsTheTerm)
	t.Run("rotation_to_a_new_ca_keeps_mutating", e.rotationKeepsMutating)
	t.Run("pod_created_while_the_webhook_is_stopped_is_admitted", e.stoppedWebhookAdmits)
}

// behindAPIServer drives the webhook behind a real API server: the webhook
// in this process, registered with the API server, and a namespace it
// manages and one it does not.
type behindAPIServer struct {
	ctx            context.Context
	cluster        *framework.Cluster
	cs             kubernetes.Interface
	ca             *certtest.Cert
	certDir        string
	wh             *webhookProcess
	managed, plain string
	// dryRun is the last dry-run Pod created while waiting for the API
	// server to call the webhook.
	dryRun *corev1.Pod
}

// startBehindAPIServer starts a control plane and the webhook, registers
// the webhook, and waits until the API server calls it.
func startBehindAPIServer(t *testing.T) *behindAPIServer {
	t.Helper()
	cluster := framework.Integration(t, framework.Options{}, "")
	e := &behindAPIServer{ctx: t.Context(), cluster: cluster, cs: cluster.Clientset, certDir: t.TempDir()}
	e.ca = certtest.MustCA(t, certtest.Options{})
	certtest.MustWriteAtomic(t, e.certDir, e.ca.MustIssue(t, certtest.Localhost(1)).Files())
	e.wh = startWebhook(t, e.certDir)
	waitReady(t, e.wh.probe)

	// Unique names, in case SNATCH_TEST_KUBECONFIG points at a shared cluster.
	suffix := fmt.Sprintf("%06x", time.Now().UnixNano()&0xffffff)
	e.managed, e.plain = "kyma-managed-"+suffix, "unlabelled-"+suffix
	createNamespace(e.ctx, t, e.cs, e.managed, map[string]string{managedByLabel: "kyma"})
	createNamespace(e.ctx, t, e.cs, e.plain, nil)
	registerWebhook(e.ctx, t, e.cs, e.wh.url, e.ca.CertPEM)
	t.Cleanup(func() {
		_ = e.cs.AdmissionregistrationV1().MutatingWebhookConfigurations().Delete(context.Background(), mwcName, metav1.DeleteOptions{})
	})

	// The API server picks the configuration up asynchronously: wait until
	// a dry-run create is mutated. This is also the --dry-run=server check.
	// On a timeout the subtest reports the last dry-run Pod.
	_ = poll.Until(e.ctx, "a mutated dry-run Pod", func(ctx context.Context) error {
		var err error
		e.dryRun, err = e.cs.CoreV1().Pods(e.managed).Create(ctx, testPod("dry-run"), metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
		if err != nil {
			t.Fatalf("dry-run create: %v", err)
		}
		if len(poolTerms(e.dryRun)) == 0 {
			return errors.New("the dry-run Pod has no pool term")
		}
		return nil
	}, poll.Timeout(eventually))
	return e
}

func (e *behindAPIServer) dryRunShowsTheMutation(t *testing.T) {
	if terms := poolTerms(e.dryRun); len(terms) != 1 || !isOurTerm(terms[0]) {
		t.Fatalf("dry-run Pod has pool terms %+v, want exactly our term", terms)
	}
	if _, err := e.cs.CoreV1().Pods(e.managed).Get(e.ctx, "dry-run", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Fatalf("the dry-run Pod was persisted: get returned %v", err)
	}
}

func (e *behindAPIServer) managedPodGetsExactlyOneTerm(t *testing.T) {
	before := e.wh.counter(t, "patched", "injected")
	created, err := e.cs.CoreV1().Pods(e.managed).Create(e.ctx, testPod("mutated"), metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	got, err := e.cs.CoreV1().Pods(e.managed).Get(e.ctx, created.Name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	terms := poolTerms(got)
	if len(terms) != 1 || !isOurTerm(terms[0]) {
		t.Fatalf("stored Pod has pool terms %+v, want exactly worker.gardener.cloud/pool In [cpu-worker-0] weight 10", terms)
	}
	if n := len(got.Spec.Affinity.NodeAffinity.PreferredDuringSchedulingIgnoredDuringExecution); n != 1 {
		t.Errorf("stored Pod has %d preferred terms, want 1", n)
	}
	if after := e.wh.counter(t, "patched", "injected"); after <= before {
		t.Errorf("snatch_webhook_admission_total{outcome=patched,reason=injected} stayed at %v", after)
	}
}

func (e *behindAPIServer) unlabelledPodGetsNone(t *testing.T) {
	created, err := e.cs.CoreV1().Pods(e.plain).Create(e.ctx, testPod("untouched"), metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if created.Spec.Affinity != nil {
		t.Fatalf("Pod in an unlabelled namespace got an affinity: %+v", created.Spec.Affinity)
	}
}

func (e *behindAPIServer) ownTermIsUnchanged(t *testing.T) {
	pod := testPod("own-choice")
	own := corev1.PreferredSchedulingTerm{Weight: 50, Preference: corev1.NodeSelectorTerm{MatchExpressions: []corev1.NodeSelectorRequirement{
		{Key: affinity.DefaultPoolLabelKey, Operator: corev1.NodeSelectorOpIn, Values: []string{"customer-pool"}},
	}}}
	pod.Spec.Affinity = &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{PreferredDuringSchedulingIgnoredDuringExecution: []corev1.PreferredSchedulingTerm{own}}}
	before := e.wh.counter(t, "allowed", "already-set")
	created, err := e.cs.CoreV1().Pods(e.managed).Create(e.ctx, pod, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	terms := created.Spec.Affinity.NodeAffinity.PreferredDuringSchedulingIgnoredDuringExecution
	if len(terms) != 1 || terms[0].Weight != 50 || terms[0].Preference.MatchExpressions[0].Values[0] != "customer-pool" {
		t.Fatalf("the Pod's own term was changed: %+v", terms)
	}
	if after := e.wh.counter(t, "allowed", "already-set"); after <= before {
		t.Errorf("the webhook did not see the Pod: already-set stayed at %v", after)
	}
}

func (e *behindAPIServer) optedOutPodIsNotMutated(t *testing.T) {
	pod := testPod("opted-out")
	pod.Labels = map[string]string{affinity.OptOutLabel: affinity.OptOutValue}
	created, err := e.cs.CoreV1().Pods(e.managed).Create(e.ctx, pod, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if created.Spec.Affinity != nil {
		t.Fatalf("opted-out Pod got an affinity: %+v", created.Spec.Affinity)
	}
}

// hugePodGetsTheTerm creates the largest Pod the API server accepts: a
// request body of 3 MiB, sent as protobuf so that '<' stays one byte on
// the way in. The API server encodes the review as JSON, where each '<'
// becomes the six bytes \u003c, so the webhook receives six times the
// body. Dry run: etcd's default request limit (1.5 MiB) would refuse to
// store the Pod after admission; the admission chain runs in full either
// way.
func (e *behindAPIServer) hugePodGetsTheTerm(t *testing.T) {
	cfg := rest.CopyConfig(e.cluster.Config)
	cfg.ContentType = "application/vnd.kubernetes.protobuf"
	pcs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	pod := testPod("huge")
	pod.Spec.Containers[0].Args = []string{strings.Repeat("<", 3<<20-16<<10)}
	before := e.wh.counter(t, "patched", "injected")
	created, err := pcs.CoreV1().Pods(e.managed).Create(e.ctx, pod, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
	if err != nil {
		t.Fatalf("create a Pod with %d bytes of '<': %v", len(pod.Spec.Containers[0].Args[0]), err)
	}
	if terms := poolTerms(created); len(terms) != 1 || !isOurTerm(terms[0]) {
		t.Fatalf("the Pod with %d bytes of '<' has pool terms %+v, want exactly our term", len(pod.Spec.Containers[0].Args[0]), terms)
	}
	if after := e.wh.counter(t, "patched", "injected"); after != before+1 {
		t.Errorf("snatch_webhook_admission_total{outcome=patched,reason=injected} went from %v to %v, want +1", before, after)
	}
}

// rotationKeepsMutating rotates to a new CA as every Gardener renewal
// does: the syncer merges the new CA into the bundle first, then kubelet
// swaps the mounted files.
func (e *behindAPIServer) rotationKeepsMutating(t *testing.T) {
	newCA := certtest.MustCA(t, certtest.Options{})
	mwc, err := e.cs.AdmissionregistrationV1().MutatingWebhookConfigurations().Get(e.ctx, mwcName, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	mwc.Webhooks[0].ClientConfig.CABundle = append(append([]byte{}, e.ca.CertPEM...), newCA.CertPEM...)
	if _, err := e.cs.AdmissionregistrationV1().MutatingWebhookConfigurations().Update(e.ctx, mwc, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	certtest.MustWriteAtomic(t, e.certDir, newCA.MustIssue(t, certtest.Localhost(2)).Files())
	err = poll.Until(e.ctx, "serial 2 to be served", func(context.Context) error {
		switch serial, err := servedSerial(e.wh.url, newCA); {
		case err != nil:
			return err
		case serial != 2:
			return fmt.Errorf("serial %d served", serial)
		}
		return nil
	}, poll.Timeout(eventually))
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("the rotated certificate was served %v after the ..data swap", time.Since(start))

	created, err := e.cs.CoreV1().Pods(e.managed).Create(e.ctx, testPod("after-rotation"), metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if terms := poolTerms(created); len(terms) != 1 || !isOurTerm(terms[0]) {
		t.Fatalf("Pod created after the rotation has pool terms %+v, want exactly our term", terms)
	}
}

func (e *behindAPIServer) stoppedWebhookAdmits(t *testing.T) {
	e.wh.stop(t)
	created, err := e.cs.CoreV1().Pods(e.managed).Create(e.ctx, testPod("fail-open"), metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("create with the webhook down: %v (failurePolicy Ignore must admit it)", err)
	}
	if created.Spec.Affinity != nil {
		t.Fatalf("Pod got an affinity with the webhook down: %+v", created.Spec.Affinity)
	}
}

func TestWebhookAnswersBadInputOverTLSWithAClear4xx(t *testing.T) {
	certDir := t.TempDir()
	ca := certtest.MustCA(t, certtest.Options{})
	certtest.MustWriteAtomic(t, certDir, ca.MustIssue(t, certtest.Localhost(1)).Files())
	wh := startWebhook(t, certDir)
	waitReady(t, wh.probe)
	client := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: ca.Pool(), ServerName: "localhost"}}}
	valid := `{"kind":"AdmissionReview","apiVersion":"admission.k8s.io/v1","request":{"uid":"u-1","kind":{"group":"","version":"v1","kind":"Pod"},"operation":"CREATE","object":{"metadata":{"name":"p"},"spec":{}}}}`

	tests := []struct {
		name        string
		path        string
		contentType string
		body        string
		code        int
		message     string
	}{
		{name: "empty_body_gets_400", body: "", code: 400, message: "body is empty"},
		{name: "non_json_gets_400", body: "<xml/>", code: 400, message: "not valid JSON"},
		{name: "wrong_content_type_gets_415", contentType: "application/yaml", body: valid, code: 415, message: "must be application/json"},
		{name: "no_request_gets_400", body: `{"kind":"AdmissionReview","apiVersion":"admission.k8s.io/v1"}`, code: 400, message: "has no request"},
		{name: "body_over_the_limit_gets_413", body: `{"pad":"` + strings.Repeat("x", admission.DefaultMaxBodyBytes) + `"}`, code: 413, message: "larger than the limit"},
		{name: "valid_review_on_the_legacy_path_is_patched", path: "/mutate--v1-pod", body: valid, code: 200, message: `"uid":"u-1","allowed":true,"patchType":"JSONPatch"`},
		{name: "unknown_path_gets_404", path: "/validate", body: valid, code: 404, message: "not found"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path, ct := tt.path, tt.contentType
			if path == "" {
				path = "/mutate-pod"
			}
			if ct == "" {
				ct = "application/json"
			}
			resp, err := client.Post(wh.url+path, ct, strings.NewReader(tt.body))
			if err != nil {
				t.Fatal(err)
			}
			b := readAll(t, resp)
			if resp.StatusCode != tt.code || !strings.Contains(b, tt.message) {
				t.Fatalf("got %d %q, want %d with %q", resp.StatusCode, b, tt.code, tt.message)
			}
			// Still serving.
			resp, err = client.Post(wh.url+"/mutate-pod", "application/json", strings.NewReader(valid))
			if err != nil || resp.StatusCode != http.StatusOK {
				t.Fatalf("a valid review after the bad one: %v %v", resp, err)
			}
			readAll(t, resp)
		})
	}
}

// servedSerial makes a TLS handshake trusting only ca and returns the
// served serial number.
func servedSerial(url string, ca *certtest.Cert) (int64, error) {
	conn, err := tls.Dial("tcp", strings.TrimPrefix(url, "https://"), &tls.Config{RootCAs: ca.Pool(), ServerName: "localhost"})
	if err != nil {
		return 0, err
	}
	defer conn.Close()
	return conn.ConnectionState().PeerCertificates[0].SerialNumber.Int64(), nil
}

func readAll(t *testing.T, resp *http.Response) string {
	t.Helper()
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("read the response: %v", err)
	}
	return string(b)
}

func waitReady(t *testing.T, probeURL string) {
	t.Helper()
	poll.Eventually(t, "the webhook to be ready", func(context.Context) error {
		return process.Ready(http.DefaultClient, probeURL+"/readyz")
	}, poll.Timeout(eventually))
}

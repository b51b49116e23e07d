package check_test

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	admissionv1 "k8s.io/api/admission/v1"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"

	"github.com/kyma-project/kim-snatch/pkg/affinity"
	"github.com/kyma-project/kim-snatch/pkg/certtest"
	"github.com/kyma-project/kim-snatch/pkg/check"
	"github.com/kyma-project/kim-snatch/pkg/check/checktest"
	"github.com/kyma-project/kim-snatch/test/framework"
)

// The admission item against a real API server that calls a webhook: the
// API server applies what the webhook answers to the dry-run Pod, and the
// item passes only on the webhook's own term, added through an entry that
// calls the webhook's Service. Any term on the pool key is not enough.
func TestAdmissionJudgesTheTermAgainstARealAPIServer(t *testing.T) {
	// The API server calls the Service's ready endpoint, the loopback
	// listener below, as there is no kube-proxy.
	c := framework.Integration(t, framework.Options{AggregatorRouting: true},
		"serves the webhook on loopback, which an existing cluster cannot call")
	ctx := context.Background()
	rc := rest.CopyConfig(c.Config)
	rc.WarningHandler = rest.NoWarnings{} // FQDN EndpointSlices are deprecated
	cs := kubernetes.NewForConfigOrDie(rc)
	if _, err := c.CreateNodes(ctx, framework.KymaPool, 1); err != nil {
		t.Fatal(err)
	}
	in := checktest.Healthy(t, itNamespace, itMWC, time.Now())
	ours := &termWebhook{}
	addr := ours.serve(t, in.CA.TLSCertificate())
	for i, p := range in.WebhookPods {
		in.EndpointSlices[i] = checktest.EndpointSlice(in.Service, p.Name, addr)
	}
	must(t, in.Create(ctx, cs))
	cfg := in.Config()

	// Another system's entry: a URL, as any webhook outside the
	// installation, with a certificate of its own.
	other := &termWebhook{}
	otherCA := certtest.MustCA(t, certtest.Options{CommonName: "another webhook", IPs: []net.IP{net.IPv4(127, 0, 0, 1)}})
	otherEntry := in.MWC.Webhooks[0].DeepCopy()
	otherEntry.Name = "mpod-v1.kb.io"
	otherEntry.ClientConfig = admissionregistrationv1.WebhookClientConfig{
		URL: ptr.To("https://" + other.serve(t, otherCA.TLSCertificate()) + "/mutate--v1-pod"), CABundle: otherCA.CertPEM,
	}

	own := affinity.DefaultPolicy().Term()
	customer := affinity.DefaultPolicy()
	customer.WorkerPool = "customer-pool"
	tests := []struct {
		name        string
		ours, other []corev1.PreferredSchedulingTerm // what each webhook adds
		entries     []admissionregistrationv1.MutatingWebhook
		want        check.Status
		message     string
	}{
		{name: "the_webhooks_own_term_passes", ours: []corev1.PreferredSchedulingTerm{own}, want: check.StatusPass, message: "came back with the webhook's term worker.gardener.cloud/pool In [cpu-worker-0] (weight 10)"},
		{name: "a_term_for_another_pool_fails", ours: []corev1.PreferredSchedulingTerm{customer.Term()}, want: check.StatusFail, message: "In [customer-pool] (weight 10), not the webhook's term"},
		{name: "two_terms_fail", ours: []corev1.PreferredSchedulingTerm{own, own}, want: check.StatusFail, message: "2 preferred terms on worker.gardener.cloud/pool"},
		{
			// Migration steps 2 to 5: the one entry calls kim-snatch, whose
			// term has the shape of the webhook's.
			name: "the_same_term_from_another_systems_entry_fails", other: []corev1.PreferredSchedulingTerm{own},
			entries: []admissionregistrationv1.MutatingWebhook{*otherEntry},
			want:    check.StatusFail, message: "no entry of MutatingWebhookConfiguration " + itMWC + " calls Service " + itNamespace + "/snatch-webhook",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ours.set(tt.ours)
			other.set(tt.other)
			entries := cmpOr(tt.entries, in.MWC.Webhooks)
			updateMWC(t, cs, func(m *admissionregistrationv1.MutatingWebhookConfiguration) { m.Webhooks = entries })
			got := settledAdmission(t, cs, cfg, tt.want, tt.message)
			if got.Status != tt.want || !strings.Contains(got.Message, tt.message) {
				t.Errorf("admission = %s %q\nwant %s with %q", got.Status, got.Message, tt.want, tt.message)
			}
			if got.Status != check.StatusPass && got.Remediation == "" {
				t.Errorf("admission %s without a remediation", got.Status)
			}
		})
	}
}

// settledAdmission runs the check until its admission item is want with
// message, or 30 s pass, and returns the last result. The API server reads
// webhook configurations from an informer: until it has seen an update, it
// calls the previous entries.
func settledAdmission(t *testing.T, cs kubernetes.Interface, cfg check.Config, want check.Status, message string) check.Result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for {
		got := result(t, check.Run(ctx, cs, cfg, time.Now()), check.IDAdmission)
		if got.Status == want && strings.Contains(got.Message, message) || ctx.Err() != nil {
			return got
		}
		time.Sleep(200 * time.Millisecond)
	}
}

func cmpOr[T any](a, b []T) []T {
	if len(a) > 0 {
		return a
	}
	return b
}

func result(t *testing.T, r check.Report, id string) check.Result {
	t.Helper()
	for _, res := range r.Checks {
		if res.ID == id {
			return res
		}
	}
	t.Fatalf("no item %s in %+v", id, r.Checks)
	return check.Result{}
}

// termWebhook answers every AdmissionReview with a patch that sets the
// Pod's preferred node affinity terms to terms; none leaves it alone.
type termWebhook struct {
	mu    sync.Mutex
	terms []corev1.PreferredSchedulingTerm
}

func (w *termWebhook) set(terms []corev1.PreferredSchedulingTerm) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.terms = terms
}

// serve listens on loopback with cert until t ends and returns the address.
func (w *termWebhook) serve(t *testing.T, cert tls.Certificate) string {
	t.Helper()
	l, err := tls.Listen("tcp", "127.0.0.1:0", &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12})
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: w, ReadHeaderTimeout: 5 * time.Second}
	go func() { _ = srv.Serve(l) }()
	t.Cleanup(func() { _ = srv.Close() })
	return l.Addr().String()
}

func (w *termWebhook) ServeHTTP(rw http.ResponseWriter, req *http.Request) {
	var review admissionv1.AdmissionReview
	if err := json.NewDecoder(req.Body).Decode(&review); err != nil || review.Request == nil {
		http.Error(rw, "not an AdmissionReview", http.StatusBadRequest)
		return
	}
	w.mu.Lock()
	terms := w.terms
	w.mu.Unlock()
	resp := &admissionv1.AdmissionResponse{UID: review.Request.UID, Allowed: true}
	if len(terms) > 0 {
		// The probe Pod has no affinity: the patch adds it whole.
		patch, _ := json.Marshal([]map[string]any{{"op": "add", "path": "/spec/affinity", "value": corev1.Affinity{
			NodeAffinity: &corev1.NodeAffinity{PreferredDuringSchedulingIgnoredDuringExecution: terms},
		}}})
		resp.Patch, resp.PatchType = patch, ptr.To(admissionv1.PatchTypeJSONPatch)
	}
	review.Response, review.Request = resp, nil
	rw.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(rw).Encode(review)
}

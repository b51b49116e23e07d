package admission

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"reflect"
	"testing"

	"github.com/go-logr/logr"
	"github.com/go-logr/zapr"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kyma-project/kim-snatch/pkg/admission/admissiontest"
	"github.com/kyma-project/kim-snatch/pkg/affinity"
	"github.com/kyma-project/kim-snatch/pkg/webhookpath"
)

// BenchmarkHandler compares this package's handler with the generic
// approach of kim-snatch's old implementation, on the same reviews:
//
//   - fast: Handler as served (no logging);
//   - fast_zap_json: the same with a production zap logger writing one JSON
//     line per decision to io.Discard;
//   - narrow_struct: encoding/json into a struct of only the fields the
//     decision needs, the strongest simple alternative to walking tokens
//     (no logging, as fast);
//   - generic: controller-runtime's admission.Webhook, which decodes the
//     whole AdmissionReview, then the whole Pod, mutates the typed Pod,
//     encodes it again and diffs the two documents into a JSON patch
//     (admission.PatchResponseFromRaw).
//
// Run with: go test ./pkg/admission -run '^$' -bench Handler -benchmem
func BenchmarkHandler(b *testing.B) {
	m, err := affinity.NewMutator(affinity.DefaultPolicy())
	if err != nil {
		b.Fatal(err)
	}
	fast, err := NewHandler(Options{Mutator: m, Log: logr.Discard()})
	if err != nil {
		b.Fatal(err)
	}
	fastZap, err := NewHandler(Options{Mutator: m, Log: zapJSONDiscard()})
	if err != nil {
		b.Fatal(err)
	}
	generic := admissiontest.Generic(m, logr.Discard())
	narrow := narrowHandler{m: m}

	for _, payload := range []struct{ name, file string }{
		{"pod_5k5", "review-pod-5k5.json"},
		{"pod_8k8_managed_fields", "review-pod-8k8-managed-fields.json"},
	} {
		body := readFile(b, payload.file)
		for _, impl := range []struct {
			name string
			h    http.Handler
		}{{"fast", fast}, {"fast_zap_json", fastZap}, {"narrow_struct", narrow}, {"generic", generic}} {
			b.Run(payload.name+"/"+impl.name, func(b *testing.B) {
				// Both must produce the same patch, or the comparison means nothing.
				got, want := patchOf(b, impl.h, body), patchOf(b, fast, body)
				if !sameJSON(b, got, want) {
					b.Fatalf("%s patch %s differs from the fast handler's %s", impl.name, got, want)
				}
				req := httptest.NewRequest(http.MethodPost, webhookpath.MutatePod, nil)
				req.Header.Set("Content-Type", "application/json")
				req.ContentLength = int64(len(body))
				w := &discardWriter{header: http.Header{}}
				rd := bytes.NewReader(body)
				req.Body = io.NopCloser(rd)
				b.SetBytes(int64(len(body)))
				b.ReportAllocs()
				for b.Loop() {
					rd.Reset(body)
					clear(w.header)
					impl.h.ServeHTTP(w, req)
				}
			})
		}
	}
}

func patchOf(b *testing.B, h http.Handler, body []byte) []byte {
	b.Helper()
	rec := post(h, "application/json", body)
	if rec.Code != http.StatusOK {
		b.Fatalf("status %d: %s", rec.Code, rec.Body)
	}
	return decodeResponse(b, rec.Body.Bytes()).Patch
}

func sameJSON(b *testing.B, x, y []byte) bool {
	var vx, vy any
	if json.Unmarshal(x, &vx) != nil || json.Unmarshal(y, &vy) != nil {
		b.Fatalf("patches do not decode: %s, %s", x, y)
	}
	return reflect.DeepEqual(vx, vy)
}

// narrowHandler decodes the review with encoding/json into narrowReview,
// builds a Pod of what it read, and answers with the same prebuilt patch.
type narrowHandler struct{ m *affinity.Mutator }

type narrowReview struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	Request    *struct {
		UID  json.RawMessage `json:"uid"`
		Kind struct {
			Group string `json:"group"`
			Kind  string `json:"kind"`
		} `json:"kind"`
		SubResource string `json:"subResource"`
		Operation   string `json:"operation"`
		Object      *struct {
			Metadata struct {
				Name         string            `json:"name"`
				GenerateName string            `json:"generateName"`
				Labels       map[string]string `json:"labels"`
				Annotations  map[string]string `json:"annotations"`
			} `json:"metadata"`
			Spec struct {
				NodeName     string            `json:"nodeName"`
				NodeSelector map[string]string `json:"nodeSelector"`
				Affinity     *corev1.Affinity  `json:"affinity"`
			} `json:"spec"`
		} `json:"object"`
	} `json:"request"`
}

func (n narrowHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(r.Body)
	var rev narrowReview
	if err != nil || json.Unmarshal(body, &rev) != nil || rev.Request == nil {
		http.Error(w, "not an AdmissionReview", http.StatusBadRequest)
		return
	}
	req := rev.Request
	var patch []byte
	if o := req.Object; o != nil && req.Kind.Group == "" && req.Kind.Kind == "Pod" && req.SubResource == "" && req.Operation == "CREATE" {
		pod := &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: o.Metadata.Name, GenerateName: o.Metadata.GenerateName, Labels: o.Metadata.Labels, Annotations: o.Metadata.Annotations},
			Spec:       corev1.PodSpec{NodeName: o.Spec.NodeName, NodeSelector: o.Spec.NodeSelector, Affinity: o.Spec.Affinity},
		}
		patch = n.m.Decide(n.m.Policy().FactsOf(pod)).Patch
	}
	w.Header().Set("Content-Type", "application/json")
	uid := bytes.TrimSuffix(bytes.TrimPrefix(req.UID, []byte(`"`)), []byte(`"`)) // the raw contents
	_, _ = w.Write(appendAllowed(nil, uid, patch))
}

func zapJSONDiscard() logr.Logger {
	core := zapcore.NewCore(zapcore.NewJSONEncoder(zap.NewProductionEncoderConfig()), zapcore.AddSync(io.Discard), zapcore.InfoLevel)
	return zapr.NewLogger(zap.New(core))
}

// discardWriter is a ResponseWriter that keeps nothing, so the benchmark
// measures the handler and not a recorder.
type discardWriter struct{ header http.Header }

func (w *discardWriter) Header() http.Header         { return w.header }
func (w *discardWriter) Write(b []byte) (int, error) { return len(b), nil }
func (w *discardWriter) WriteHeader(int)             {}

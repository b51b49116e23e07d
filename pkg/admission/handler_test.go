package admission

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/go-logr/logr"
	"github.com/prometheus/client_golang/prometheus"
	admissionv1 "k8s.io/api/admission/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/yaml"

	"github.com/kyma-project/kim-snatch/pkg/affinity"
	"github.com/kyma-project/kim-snatch/pkg/webhookpath"
)

const ourTerm = `{"weight":10,"preference":{"matchExpressions":[{"key":"worker.gardener.cloud/pool","operator":"In","values":["cpu-worker-0"]}]}}`

func TestHandlerPatchesOnlyPodsThatLackThePoolKey(t *testing.T) {
	h, metrics := newTestHandler(t)
	tests := []struct {
		name    string
		body    []byte
		outcome string
		reason  affinity.Reason
		patch   string
	}{
		{
			name: "pod_without_affinity_is_patched", body: reviewOf(t, "uid-1", "CREATE", podKind, goldenPod(t, "no-affinity.yaml")),
			outcome: OutcomePatched, reason: affinity.ReasonInjected,
			patch: `[{"op":"add","path":"/spec/affinity","value":{"nodeAffinity":{"preferredDuringSchedulingIgnoredDuringExecution":[` + ourTerm + `]}}}]`,
		},
		{
			name: "pod_with_other_preferred_terms_gets_ours_appended", body: reviewOf(t, "uid-2", "CREATE", podKind, goldenPod(t, "other-preferred-terms.yaml")),
			outcome: OutcomePatched, reason: affinity.ReasonInjected,
			patch: `[{"op":"add","path":"/spec/affinity/nodeAffinity/preferredDuringSchedulingIgnoredDuringExecution/-","value":` + ourTerm + `}]`,
		},
		{
			name: "replicaset_pod_with_generate_name_is_patched", body: reviewOf(t, "uid-3", "CREATE", podKind, goldenPod(t, "replicaset-generate-name.yaml")),
			outcome: OutcomePatched, reason: affinity.ReasonInjected,
			patch: `[{"op":"add","path":"/spec/affinity/nodeAffinity/preferredDuringSchedulingIgnoredDuringExecution","value":[` + ourTerm + `]}]`,
		},
		{name: "pool_node_selector_is_kept", body: reviewOf(t, "uid-4", "CREATE", podKind, goldenPod(t, "node-selector-pool.yaml")), outcome: OutcomeAllowed, reason: affinity.ReasonAlreadySet},
		{name: "required_pool_term_is_kept", body: reviewOf(t, "uid-5", "CREATE", podKind, goldenPod(t, "required-pool-key.yaml")), outcome: OutcomeAllowed, reason: affinity.ReasonAlreadySet},
		{name: "our_term_is_not_added_twice", body: reviewOf(t, "uid-6", "CREATE", podKind, goldenPod(t, "term-already-present.yaml")), outcome: OutcomeAllowed, reason: affinity.ReasonAlreadySet},
		{name: "bound_pod_is_left_alone", body: reviewOf(t, "uid-7", "CREATE", podKind, goldenPod(t, "bound.yaml")), outcome: OutcomeAllowed, reason: affinity.ReasonAlreadyScheduled},
		{name: "mirror_pod_is_left_alone", body: reviewOf(t, "uid-8", "CREATE", podKind, goldenPod(t, "mirror.yaml")), outcome: OutcomeAllowed, reason: affinity.ReasonAlreadyScheduled},
		{name: "opted_out_pod_is_left_alone", body: reviewOf(t, "uid-9", "CREATE", podKind, goldenPod(t, "opt-out.yaml")), outcome: OutcomeAllowed, reason: affinity.ReasonOptedOut},
		{name: "update_is_not_mutated", body: reviewOf(t, "uid-10", "UPDATE", podKind, goldenPod(t, "no-affinity.yaml")), outcome: OutcomeAllowed, reason: affinity.ReasonNotCreate},
		{name: "other_kind_is_not_mutated", body: reviewOf(t, "uid-11", "CREATE", `{"group":"apps","version":"v1","kind":"Deployment"}`, []byte(`{"spec":{}}`)), outcome: OutcomeAllowed, reason: affinity.ReasonNotPod},
		{
			name:    "pod_subresource_is_not_mutated",
			body:    []byte(`{"kind":"AdmissionReview","apiVersion":"admission.k8s.io/v1","request":{"uid":"uid-12","kind":` + podKind + `,"subResource":"ephemeralcontainers","operation":"CREATE","object":{}}}`),
			outcome: OutcomeAllowed, reason: affinity.ReasonNotPod,
		},
		{
			name:    "pod_create_without_object_fails_open",
			body:    []byte(`{"kind":"AdmissionReview","apiVersion":"admission.k8s.io/v1","request":{"uid":"uid-13","kind":` + podKind + `,"operation":"CREATE","object":null}}`),
			outcome: OutcomeAllowed, reason: affinity.ReasonError,
		},
		{
			name:    "pod_of_the_wrong_shape_fails_open",
			body:    []byte(`{"kind":"AdmissionReview","apiVersion":"admission.k8s.io/v1","request":{"uid":"uid-14","kind":` + podKind + `,"operation":"CREATE","object":{"spec":{"affinity":[]}}}}`),
			outcome: OutcomeAllowed, reason: affinity.ReasonError,
		},
		{
			name:    "escaped_uid_is_echoed_exactly",
			body:    []byte(`{"kind":"AdmissionReview","apiVersion":"admission.k8s.io/v1","request":{"uid":"a\"b\u00e9","kind":` + podKind + `,"operation":"DELETE"}}`),
			outcome: OutcomeAllowed, reason: affinity.ReasonNotCreate,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := counterValue(metrics, tt.outcome, string(tt.reason))
			rec := post(h, "application/json", tt.body)
			if rec.Code != http.StatusOK {
				t.Fatalf("status = %d, body %s", rec.Code, rec.Body)
			}
			resp := decodeResponse(t, rec.Body.Bytes())
			if want := requestUID(t, tt.body); resp.UID != want {
				t.Errorf("uid = %q, want %q", resp.UID, want)
			}
			if !resp.Allowed {
				t.Errorf("allowed = false: the webhook must never deny")
			}
			if string(resp.Patch) != tt.patch {
				t.Errorf("patch =\n%s\nwant\n%s", resp.Patch, tt.patch)
			}
			if (resp.PatchType != nil) != (tt.patch != "") {
				t.Errorf("patchType = %v with patch %q", resp.PatchType, resp.Patch)
			}
			after := counterValue(metrics, tt.outcome, string(tt.reason))
			if after != before+1 {
				t.Errorf("snatch_webhook_admission_total{outcome=%q,reason=%q} went from %v to %v, want +1", tt.outcome, tt.reason, before, after)
			}
		})
	}
}

func TestHandlerAnswersMalformedRequestsWithA4xx(t *testing.T) {
	h, metrics := newTestHandler(t, func(o *Options) { o.MaxBodyBytes = 64 << 10 })
	valid := reviewOf(t, "uid-ok", "CREATE", podKind, goldenPod(t, "no-affinity.yaml"))
	tests := []struct {
		name        string
		method      string
		contentType string
		body        []byte
		code        int
		reason      string
		message     string
		uid         string
	}{
		{name: "empty_body_gets_400", body: nil, code: 400, reason: ReasonEmptyBody, message: "body is empty"},
		{name: "non_json_gets_400", body: []byte("hello"), code: 400, reason: ReasonInvalidJSON, message: "not valid JSON"},
		{name: "truncated_json_gets_400", body: valid[:len(valid)/2], code: 400, reason: ReasonInvalidJSON, message: "not valid JSON", uid: "uid-ok"},
		{name: "trailing_garbage_gets_400", body: append(append([]byte{}, valid...), "}"...), code: 400, reason: ReasonInvalidJSON, message: "after the top-level value", uid: "uid-ok"},
		{name: "json_array_gets_400", body: []byte(`[1,2]`), code: 400, reason: ReasonInvalidReview, message: "must be a JSON object"},
		{name: "duplicate_member_names_get_400", body: bytes.Replace(valid, []byte(`"request":{`), []byte(`"request":{"operation":"DELETE",`), 1), code: 400, reason: ReasonInvalidJSON, message: `duplicate object member name "operation"`, uid: "uid-ok"},
		{name: "invalid_utf8_gets_400", body: bytes.Replace(valid, []byte(`"uid-ok"`), []byte("\"uid-\xff\""), 1), code: 400, reason: ReasonInvalidJSON, message: "invalid UTF-8"},
		{name: "wrong_content_type_gets_415", contentType: "text/plain", body: valid, code: 415, reason: ReasonWrongContentType, message: "must be application/json, got text/plain", uid: "uid-ok"},
		{name: "missing_content_type_gets_415", contentType: "-", body: valid, code: 415, reason: ReasonWrongContentType, message: "got none", uid: "uid-ok"},
		{name: "no_request_gets_400", body: []byte(`{"kind":"AdmissionReview","apiVersion":"admission.k8s.io/v1"}`), code: 400, reason: ReasonNoRequest, message: "has no request"},
		{name: "null_request_gets_400", body: []byte(`{"kind":"AdmissionReview","apiVersion":"admission.k8s.io/v1","request":null}`), code: 400, reason: ReasonNoRequest, message: "has no request"},
		{name: "no_uid_gets_400", body: []byte(`{"kind":"AdmissionReview","apiVersion":"admission.k8s.io/v1","request":{"operation":"CREATE"}}`), code: 400, reason: ReasonNoUID, message: "has no uid"},
		{name: "v1beta1_review_gets_400", body: bytes.Replace(valid, []byte("admission.k8s.io/v1"), []byte("admission.k8s.io/v1beta1"), 1), code: 400, reason: ReasonInvalidReview, message: "expected apiVersion admission.k8s.io/v1", uid: "uid-ok"},
		{name: "request_of_wrong_type_gets_400", body: []byte(`{"kind":"AdmissionReview","apiVersion":"admission.k8s.io/v1","request":"x"}`), code: 400, reason: ReasonInvalidReview, message: "request must be an object"},
		{name: "body_over_the_limit_gets_413", body: bytes.Repeat([]byte(" "), 64<<10+1), code: 413, reason: ReasonBodyTooLarge, message: "larger than the limit of 65536 bytes"},
		{name: "get_is_not_served", method: http.MethodGet, code: 405, reason: ReasonMethodNotAllowed, message: "only POST"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			method := tt.method
			if method == "" {
				method = http.MethodPost
			}
			req := httptest.NewRequest(method, webhookpath.MutatePod, bytes.NewReader(tt.body))
			switch tt.contentType {
			case "":
				req.Header.Set("Content-Type", "application/json")
			case "-":
			default:
				req.Header.Set("Content-Type", tt.contentType)
			}
			before := counterValue(metrics, OutcomeMalformed, tt.reason)
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, req)
			if rec.Code != tt.code {
				t.Fatalf("status = %d, want %d; body %s", rec.Code, tt.code, rec.Body)
			}
			resp := decodeResponse(t, rec.Body.Bytes())
			if resp.Result == nil || !strings.Contains(resp.Result.Message, tt.message) || resp.Result.Code != int32(tt.code) {
				t.Fatalf("status = %+v, want code %d and a message containing %q", resp.Result, tt.code, tt.message)
			}
			if resp.UID != (types.UID(tt.uid)) {
				t.Errorf("uid = %q, want %q", resp.UID, tt.uid)
			}
			if got := counterValue(metrics, OutcomeMalformed, tt.reason); got != before+1 {
				t.Errorf("malformed/%s counter went from %v to %v, want +1", tt.reason, before, got)
			}
			// The handler goes on serving after every bad request.
			if rec := post(h, "application/json", valid); rec.Code != http.StatusOK {
				t.Fatalf("a valid review after the bad one got %d", rec.Code)
			}
		})
	}
}

func TestHandlerAcceptsAContentTypeWithParameters(t *testing.T) {
	h, _ := newTestHandler(t)
	body := reviewOf(t, "uid-ct", "CREATE", podKind, goldenPod(t, "no-affinity.yaml"))
	if rec := post(h, "application/json; charset=utf-8", body); rec.Code != http.StatusOK {
		t.Fatalf("status = %d, body %s", rec.Code, rec.Body)
	}
}

func TestHandlerLogsOneLinePerDecision(t *testing.T) {
	var lines []string
	log := logr.New(&recordSink{lines: &lines})
	h, _ := newTestHandler(t, func(o *Options) { o.Log = log })
	post(h, "application/json", reviewOf(t, "uid-log", "CREATE", podKind, goldenPod(t, "replicaset-generate-name.yaml")))
	if len(lines) != 1 {
		t.Fatalf("got %d log lines, want 1: %q", len(lines), lines)
	}
	for _, want := range []string{"namespace=kyma-system", "pod=eventing-manager-7d9c8b6f5-*", "reason=injected", "outcome=patched", "uid=uid-log"} {
		if !strings.Contains(lines[0], want) {
			t.Errorf("log line %q lacks %q", lines[0], want)
		}
	}
}

func TestHandlerPatchesRealisticReviews(t *testing.T) {
	h, _ := newTestHandler(t)
	for _, file := range []string{"review-pod-5k5.json", "review-pod-8k8-managed-fields.json"} {
		t.Run(strings.TrimSuffix(file, ".json"), func(t *testing.T) {
			body := readFile(t, file)
			rec := post(h, "application/json", body)
			resp := decodeResponse(t, rec.Body.Bytes())
			want := `[{"op":"add","path":"/spec/affinity/nodeAffinity","value":{"preferredDuringSchedulingIgnoredDuringExecution":[` + ourTerm + `]}}]`
			if rec.Code != http.StatusOK || string(resp.Patch) != want {
				t.Fatalf("status %d, patch %s, want %s", rec.Code, resp.Patch, want)
			}
		})
	}
}

const podKind = `{"group":"","version":"v1","kind":"Pod"}`

type handlerOption func(*Options)

func newTestHandler(t testing.TB, opts ...handlerOption) (*Handler, *Metrics) {
	t.Helper()
	m, err := affinity.NewMutator(affinity.DefaultPolicy())
	if err != nil {
		t.Fatal(err)
	}
	metrics, err := NewMetrics(prometheus.NewRegistry())
	if err != nil {
		t.Fatal(err)
	}
	o := Options{Mutator: m, Metrics: metrics, Log: logr.Discard()}
	for _, opt := range opts {
		opt(&o)
	}
	h, err := NewHandler(o)
	if err != nil {
		t.Fatal(err)
	}
	return h, metrics
}

func post(h http.Handler, contentType string, body []byte) *httptest.ResponseRecorder {
	req := httptest.NewRequest(http.MethodPost, webhookpath.MutatePod, bytes.NewReader(body))
	req.Header.Set("Content-Type", contentType)
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return rec
}

func reviewOf(t testing.TB, uid, op, kind string, object []byte) []byte {
	t.Helper()
	return fmt.Appendf(nil, `{"kind":"AdmissionReview","apiVersion":"admission.k8s.io/v1","request":{"uid":%q,"kind":%s,"resource":{"group":"","version":"v1","resource":"pods"},"namespace":"kyma-system","operation":%q,"userInfo":{"username":"system:serviceaccount:kube-system:replicaset-controller"},"object":%s,"oldObject":null,"dryRun":false,"options":{"kind":"CreateOptions","apiVersion":"meta.k8s.io/v1"}}}`,
		uid, kind, op, object)
}

// goldenPod returns a golden Pod of the affinity package as the API server
// sends it.
func goldenPod(t testing.TB, file string) []byte {
	t.Helper()
	y, err := os.ReadFile(filepath.Join("..", "affinity", "testdata", file))
	if err != nil {
		t.Fatal(err)
	}
	pod := &corev1.Pod{}
	if err := yaml.UnmarshalStrict(y, pod); err != nil {
		t.Fatal(err)
	}
	b, err := json.Marshal(pod)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func readFile(t testing.TB, file string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", file))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// decodeResponse decodes a response with the typed API, which holds the
// hand-written encoding to the v1 AdmissionReview shape.
func decodeResponse(t testing.TB, body []byte) *admissionv1.AdmissionResponse {
	t.Helper()
	var rev admissionv1.AdmissionReview
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&rev); err != nil {
		t.Fatalf("response is not an AdmissionReview: %v\n%s", err, body)
	}
	if rev.APIVersion != "admission.k8s.io/v1" || rev.Kind != "AdmissionReview" || rev.Response == nil {
		t.Fatalf("response is not a v1 AdmissionReview with a response: %s", body)
	}
	if _, err := io.ReadAll(dec.Buffered()); err != nil {
		t.Fatal(err)
	}
	return rev.Response
}

func requestUID(t testing.TB, body []byte) types.UID {
	t.Helper()
	var rev admissionv1.AdmissionReview
	if err := json.Unmarshal(body, &rev); err != nil {
		t.Fatal(err)
	}
	return rev.Request.UID
}

// recordSink is a logr sink that keeps each line as "msg k=v ...".
type recordSink struct{ lines *[]string }

func (s *recordSink) Init(logr.RuntimeInfo)  {}
func (s *recordSink) Enabled(level int) bool { return level == 0 }
func (s *recordSink) Info(_ int, msg string, kv ...any) {
	var b strings.Builder
	b.WriteString(msg)
	for i := 0; i+1 < len(kv); i += 2 {
		fmt.Fprintf(&b, " %v=%v", kv[i], kv[i+1])
	}
	*s.lines = append(*s.lines, b.String())
}
func (s *recordSink) Error(err error, msg string, kv ...any) {
	s.Info(0, msg, append(kv, "error", err)...)
}
func (s *recordSink) WithValues(...any) logr.LogSink { return s }
func (s *recordSink) WithName(string) logr.LogSink   { return s }

func TestHandlerPanicIsAllowedWithoutPatch(t *testing.T) {
	h, metrics := newTestHandler(t, func(o *Options) { o.Log = logr.New(panicSink{}) })
	before := counterValue(metrics, OutcomeAllowed, string(affinity.ReasonError))
	rec := post(h, "application/json", reviewOf(t, "uid-panic", "CREATE", podKind, goldenPod(t, "no-affinity.yaml")))
	if rec.Code != http.StatusOK {
		t.Fatalf("status = %d after a panic, want 200", rec.Code)
	}
	resp := decodeResponse(t, rec.Body.Bytes())
	if resp.UID != "uid-panic" || !resp.Allowed || len(resp.Patch) != 0 {
		t.Fatalf("response after a panic = %+v, want allowed without a patch and the uid", resp)
	}
	if got := counterValue(metrics, OutcomeAllowed, string(affinity.ReasonError)); got != before+1 {
		t.Errorf("allowed/error counter went from %v to %v, want +1", before, got)
	}
}

// panicSink panics on the decision log line, standing in for any bug on
// the way to the response.
type panicSink struct{}

func (panicSink) Init(logr.RuntimeInfo)            {}
func (panicSink) Enabled(int) bool                 { return true }
func (panicSink) Info(_ int, msg string, _ ...any) { panic("bug while logging: " + msg) }
func (panicSink) Error(error, string, ...any)      {}
func (s panicSink) WithValues(...any) logr.LogSink { return s }
func (s panicSink) WithName(string) logr.LogSink   { return s }

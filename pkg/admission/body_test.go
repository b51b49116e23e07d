package admission

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"sync"
	"testing"
	"testing/iotest"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kyma-project/kim-snatch/pkg/affinity"
	"github.com/kyma-project/kim-snatch/pkg/webhookpath"
)

// A client that claims the largest body and sends a few bytes before it goes
// away must not make the handler allocate anything like its claim.
func TestHandlerAllocatesOnlyForBytesThatArrive(t *testing.T) {
	h, metrics := newTestHandler(t)
	post(h, "application/json", reviewOf(t, "warm", "CREATE", podKind, goldenPod(t, "no-affinity.yaml"))) // pools the buffers
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	req := httptest.NewRequest(http.MethodPost, webhookpath.MutatePod, io.MultiReader(
		strings.NewReader(`{"kind":"AdmissionReview"`), iotest.ErrReader(io.ErrUnexpectedEOF)))
	req.ContentLength = DefaultMaxBodyBytes
	req.Header.Set("Content-Type", "application/json")
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	runtime.ReadMemStats(&after)
	if rec.Code != http.StatusBadRequest {
		t.Errorf("status = %d, want 400 for a body cut short", rec.Code)
	}
	if got := after.TotalAlloc - before.TotalAlloc; got > 1<<20 {
		t.Errorf("the request allocated %d bytes for a claim of %d and 25 bytes sent; want under 1 MiB", got, DefaultMaxBodyBytes)
	}
	if got := counterValue(metrics, OutcomeMalformed, ReasonInvalidJSON); got != 1 {
		t.Errorf("invalid-json count = %v, want 1", got)
	}
}

// slowRequest serves a request whose body arrives through a pipe: the test
// writes part of it, which returns once the handler has read it.
type slowRequest struct {
	w    *io.PipeWriter
	rec  *httptest.ResponseRecorder
	done sync.WaitGroup
}

func startSlowRequest(h http.Handler, contentLength int64) *slowRequest {
	pr, pw := io.Pipe()
	s := &slowRequest{w: pw, rec: httptest.NewRecorder()}
	req := httptest.NewRequest(http.MethodPost, webhookpath.MutatePod, pr)
	req.ContentLength = contentLength
	req.Header.Set("Content-Type", "application/json")
	s.done.Go(func() { h.ServeHTTP(s.rec, req) })
	return s
}

// finish writes the rest of the body and waits for the answer.
func (s *slowRequest) finish(t *testing.T, rest []byte) *httptest.ResponseRecorder {
	t.Helper()
	if _, err := s.w.Write(rest); err != nil {
		t.Fatal(err)
	}
	_ = s.w.Close()
	s.done.Wait()
	return s.rec
}

// Requests whose bodies hold the whole budget keep it; the one request that
// would go past it gets a 503 without Retry-After (so the API server neither
// retries nor waits, and fails open), and both of the others are patched.
func TestHandlerRefusesOnlyTheRequestPastTheBodyBudget(t *testing.T) {
	const budget, held = 1 << 20, 510 << 10 // two bodies of held bytes leave less than 8 KiB
	h, metrics := newTestHandler(t, func(o *Options) { o.MaxBodyBytes, o.InFlightBodyBytes = 600<<10, budget })
	review := reviewOf(t, "uid-slow", "CREATE", podKind, goldenPod(t, "no-affinity.yaml"))
	padded := append(bytes.Repeat([]byte(" "), held), review...) // JSON allows leading whitespace
	var slow []*slowRequest
	for range 2 {
		s := startSlowRequest(h, int64(len(padded)))
		if _, err := s.w.Write(padded[:held]); err != nil {
			t.Fatal(err)
		}
		slow = append(slow, s)
	}
	small := append(bytes.Repeat([]byte(" "), 8<<10), reviewOf(t, "uid-over", "CREATE", podKind, goldenPod(t, "no-affinity.yaml"))...)
	beforeOver := time.Now()
	rec := post(h, "application/json", small)
	if rec.Code != http.StatusServiceUnavailable {
		t.Errorf("status past the budget = %d, want 503; body %s", rec.Code, rec.Body)
	}
	if v := rec.Header().Get("Retry-After"); v != "" {
		t.Errorf("Retry-After = %q: the API server would retry instead of failing open", v)
	}
	if resp := decodeResponse(t, rec.Body.Bytes()); resp.Result == nil || resp.Result.Reason != metav1.StatusReasonServiceUnavailable {
		t.Errorf("status of the answer = %+v, want reason ServiceUnavailable", resp.Result)
	}
	if got := counterValue(metrics, OutcomeMalformed, ReasonOverBudget); got != 1 {
		t.Errorf("over-budget count = %v, want 1", got)
	}
	if got, want := lastPodReview(metrics), unixSeconds(processStart.UnixNano()); got != want {
		t.Errorf("the last Pod review moved to %v on the over-budget call; want the start, %v", got, want)
	}
	for i, s := range slow {
		if rec := s.finish(t, padded[held:]); rec.Code != http.StatusOK || decodeResponse(t, rec.Body.Bytes()).Patch == nil {
			t.Errorf("request %d that held the budget: status %d, body %.200s; want patched", i, rec.Code, rec.Body)
		}
	}
	// Answered after the over-budget call, they arrived before it.
	if got, over := lastPodReview(metrics), unixSeconds(beforeOver.UnixNano()); got <= unixSeconds(processStart.UnixNano()) || got > over {
		t.Errorf("the last Pod review is at %v; want the arrival of the requests that held the budget, before %v", got, over)
	}
	if rec := post(h, "application/json", small); rec.Code != http.StatusOK {
		t.Errorf("after the budget was released: status %d, want 200", rec.Code)
	}
}

// hugeReview is the review of a Pod of the API server's largest request (3
// MiB), all of it '<', which a review escapes to six bytes each.
func hugeReview(t testing.TB) []byte {
	t.Helper()
	pod := corev1.Pod{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"},
		ObjectMeta: metav1.ObjectMeta{Name: "huge", Namespace: "kyma-system", Annotations: map[string]string{"a": strings.Repeat("<", 3<<20-1024)}},
		Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "busybox"}}},
	}
	object, err := json.Marshal(pod) // escapes '<' as \u003c, as the API server does
	if err != nil {
		t.Fatal(err)
	}
	return reviewOf(t, "uid-huge", "CREATE", podKind, object)
}

// With the defaults, the review of the largest Pod is patched while normal
// reviews are in flight beside it.
func TestHandlerPatchesTheLargestReviewUnderTheDefaultBudget(t *testing.T) {
	h, _ := newTestHandler(t)
	body := hugeReview(t)
	if len(body) < 6*(3<<20-1024) {
		t.Fatalf("the review has %d bytes, want every '<' escaped to six", len(body))
	}
	normal := reviewOf(t, "uid-normal", "CREATE", podKind, goldenPod(t, "no-affinity.yaml"))
	var beside []*slowRequest
	for range 64 {
		s := startSlowRequest(h, int64(len(normal)))
		if _, err := s.w.Write(normal[:len(normal)/2]); err != nil {
			t.Fatal(err)
		}
		beside = append(beside, s)
	}
	rec := post(h, "application/json", body)
	if rec.Code != http.StatusOK {
		t.Fatalf("status = %d, body %.300s", rec.Code, rec.Body)
	}
	if resp := decodeResponse(t, rec.Body.Bytes()); resp.Patch == nil {
		t.Errorf("the largest review was not patched: %.300s", rec.Body)
	}
	for i, s := range beside {
		if rec := s.finish(t, normal[len(normal)/2:]); rec.Code != http.StatusOK {
			t.Errorf("normal review %d: status %d", i, rec.Code)
		}
	}
}

func TestNewHandlerRefusesABudgetThatCannotHoldTheLargestBody(t *testing.T) {
	m, err := affinity.NewMutator(affinity.DefaultPolicy())
	if err != nil {
		t.Fatal(err)
	}
	_, err = NewHandler(Options{Mutator: m, MaxBodyBytes: 1 << 20, InFlightBodyBytes: 1 << 20})
	if err == nil || !strings.Contains(err.Error(), "must hold one body of the largest size") {
		t.Errorf("err = %v, want the budget refused", err)
	}
}

func TestNextBodyCapFollowsTheBytesNotTheClaim(t *testing.T) {
	tests := []struct {
		name            string
		n               int
		declared, limit int64
		want            int64
	}{
		{name: "nothing_read_starts_small", n: 0, declared: 32 << 20, limit: 32<<20 + 1, want: minBodyChunk},
		{name: "doubles_what_arrived", n: 1 << 20, declared: 32 << 20, limit: 32<<20 + 1, want: 2 << 20},
		{name: "stops_one_byte_past_the_claim", n: 16 << 20, declared: 18 << 20, limit: 32<<20 + 1, want: 18<<20 + 1},
		{name: "unknown_length_doubles", n: 64 << 10, declared: -1, limit: 32<<20 + 1, want: 128 << 10},
		{name: "never_past_the_limit", n: 20 << 20, declared: -1, limit: 32<<20 + 1, want: 32<<20 + 1},
		{name: "a_claim_already_passed_is_ignored", n: 64 << 10, declared: 100, limit: 32<<20 + 1, want: 128 << 10},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := nextBodyCap(tt.n, tt.declared, tt.limit); got != tt.want {
				t.Errorf("nextBodyCap(%d, %d, %d) = %d, want %d", tt.n, tt.declared, tt.limit, got, tt.want)
			}
		})
	}
}

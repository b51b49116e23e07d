package admission

import (
	"bytes"
	"cmp"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/kyma-project/kim-snatch/pkg/affinity"
	"github.com/kyma-project/kim-snatch/pkg/metric/metrictest"
	"github.com/kyma-project/kim-snatch/pkg/webhookpath"
)

// counterValue reads one counter of the vector.
func counterValue(m *Metrics, outcome, reason string) float64 {
	return testutil.ToFloat64(m.total.WithLabelValues(outcome, reason))
}

func TestNewMetricsRegistersEveryLabelPairAtZero(t *testing.T) {
	got := metrictest.SeriesAtStart(t, NewMetrics)
	malformed := []string{ReasonMethodNotAllowed, ReasonBodyTooLarge, ReasonEmptyBody, ReasonWrongContentType,
		ReasonInvalidJSON, ReasonInvalidReview, ReasonNoRequest, ReasonNoUID, ReasonOverBudget}
	if want := len(affinity.Reasons()) + len(malformed); got["snatch_webhook_admission_total"] != want {
		t.Errorf("snatch_webhook_admission_total has %d series, want %d", got["snatch_webhook_admission_total"], want)
	}
	if got["snatch_webhook_admission_duration_seconds"] != 1 {
		t.Errorf("snatch_webhook_admission_duration_seconds missing: %v", got)
	}
}

func TestRegisterPolicyExportsThePoolTheTermPrefers(t *testing.T) {
	reg := prometheus.NewRegistry()
	p := affinity.Policy{PoolLabelKey: "example.com/pool", WorkerPool: "system", Weight: 5}
	if err := RegisterPolicy(reg, p); err != nil {
		t.Fatal(err)
	}
	want := `# HELP snatch_webhook_policy_info The pool label key and worker pool that the webhook's term prefers; always 1.
# TYPE snatch_webhook_policy_info gauge
snatch_webhook_policy_info{pool_label_key="example.com/pool",worker_pool="system"} 1
`
	if err := testutil.GatherAndCompare(reg, strings.NewReader(want)); err != nil {
		t.Error(err)
	}
}

// lastPodReview reads snatch_webhook_last_pod_review_timestamp_seconds.
func lastPodReview(m *Metrics) float64 { return testutil.ToFloat64(m.lastPodReview) }

func TestLastPodReviewStartsAtTheStartTimeGiven(t *testing.T) {
	reg := prometheus.NewRegistry()
	if _, err := newMetrics(reg, time.Unix(1_700_000_000, 250_000_000)); err != nil {
		t.Fatal(err)
	}
	want := `# HELP snatch_webhook_last_pod_review_timestamp_seconds Unix time at which this replica last received an AdmissionReview of a Pod CREATE, whatever the decision, taken when the request arrived; malformed and over-budget requests do not count. The process's start time until the first.
# TYPE snatch_webhook_last_pod_review_timestamp_seconds gauge
snatch_webhook_last_pod_review_timestamp_seconds 1.70000000025e+09
`
	if err := testutil.GatherAndCompare(reg, strings.NewReader(want), "snatch_webhook_last_pod_review_timestamp_seconds"); err != nil {
		t.Error(err)
	}
	m, err := NewMetrics(prometheus.NewRegistry())
	if err != nil {
		t.Fatal(err)
	}
	if got, want := lastPodReview(m), unixSeconds(processStart.UnixNano()); got != want {
		t.Errorf("NewMetrics starts the last Pod review at %v, want the process's start, %v", got, want)
	}
}

// Every Pod CREATE moves the time to its arrival, whatever the decision; the
// other requests leave it where it was.
func TestLastPodReviewMovesOnlyOnPodCreates(t *testing.T) {
	const started = 1_000_000_000
	metrics, err := newMetrics(prometheus.NewRegistry(), time.Unix(started, 0))
	if err != nil {
		t.Fatal(err)
	}
	h, _ := newTestHandler(t, func(o *Options) { o.Metrics = metrics })
	podCreate := reviewOf(t, "uid-create", "CREATE", podKind, goldenPod(t, "no-affinity.yaml"))
	unmoved := []struct {
		name, contentType string
		body              []byte
	}{
		{name: "invalid_json", body: []byte(`{"kind":"AdmissionReview",`)},
		{name: "no_uid", body: []byte(`{"kind":"AdmissionReview","apiVersion":"admission.k8s.io/v1","request":{"kind":` + podKind + `,"operation":"CREATE","object":{}}}`)},
		{name: "pod_create_of_the_wrong_content_type", contentType: "text/plain", body: podCreate},
		{name: "update", body: reviewOf(t, "uid-update", "UPDATE", podKind, goldenPod(t, "no-affinity.yaml"))},
		{name: "not_a_pod", body: reviewOf(t, "uid-deploy", "CREATE", `{"group":"apps","version":"v1","kind":"Deployment"}`, []byte(`{}`))},
	}
	for _, tt := range unmoved {
		post(h, cmp.Or(tt.contentType, "application/json"), tt.body)
		if got := lastPodReview(metrics); got != started {
			t.Errorf("%s: the last Pod review moved to %v, want it at the start, %v", tt.name, got, float64(started))
		}
	}
	moved := []struct {
		name string
		body []byte
	}{
		{name: "patched", body: podCreate},
		{name: "allowed", body: reviewOf(t, "uid-allowed", "CREATE", podKind, goldenPod(t, "opt-out.yaml"))},
		{name: "error", body: reviewOf(t, "uid-error", "CREATE", podKind, []byte(`{"spec":{"affinity":[]}}`))},
	}
	for _, tt := range moved {
		before := time.Now()
		post(h, "application/json", tt.body)
		if got, want := lastPodReview(metrics), unixSeconds(before.UnixNano()); got < want {
			t.Errorf("%s: the last Pod review is at %v, before the call at %v", tt.name, got, want)
		}
	}
}

// firstReadClock is a request body that notes when the handler first reads
// it, and then takes its time to arrive.
type firstReadClock struct {
	body      io.Reader
	firstRead time.Time
}

func (c *firstReadClock) Read(p []byte) (int, error) {
	if c.firstRead.IsZero() {
		c.firstRead = time.Now()
		time.Sleep(20 * time.Millisecond)
	}
	return c.body.Read(p)
}

// The time is the request's arrival, not its answer: a review whose body
// takes long to arrive counts from its start.
func TestLastPodReviewIsTheArrivalOfTheRequest(t *testing.T) {
	h, metrics := newTestHandler(t)
	body := &firstReadClock{body: bytes.NewReader(reviewOf(t, "uid-slow", "CREATE", podKind, goldenPod(t, "no-affinity.yaml")))}
	req := httptest.NewRequest(http.MethodPost, webhookpath.MutatePod, body)
	req.Header.Set("Content-Type", "application/json")
	rec := httptest.NewRecorder()
	before := time.Now()
	h.ServeHTTP(rec, req)
	if rec.Code != http.StatusOK {
		t.Fatalf("status = %d, body %s", rec.Code, rec.Body)
	}
	got := lastPodReview(metrics)
	if from, to := unixSeconds(before.UnixNano()), unixSeconds(body.firstRead.UnixNano()); got < from || got > to {
		t.Errorf("the last Pod review is at %v, want from the call at %v to the body's first read at %v", got, from, to)
	}
}

// A review that arrived before another but is recorded after it does not
// move the time back.
func TestLastPodReviewNeverMovesBack(t *testing.T) {
	m, err := newMetrics(prometheus.NewRegistry(), time.Unix(1_000_000_000, 0))
	if err != nil {
		t.Fatal(err)
	}
	m.podReviewArrived(time.Unix(1_000_000_200, 0))
	m.podReviewArrived(time.Unix(1_000_000_100, 0))
	if got := lastPodReview(m); got != 1_000_000_200 {
		t.Errorf("the last Pod review = %v, want the later arrival, 1000000200", got)
	}
}

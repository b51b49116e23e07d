package admission

import (
	"fmt"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/kyma-project/kim-snatch/pkg/affinity"
	"github.com/kyma-project/kim-snatch/pkg/metric"
	"github.com/kyma-project/kim-snatch/pkg/version"
)

// Outcomes of a request, the "outcome" label of snatch_webhook_admission_total;
// none is a denial.
const (
	OutcomePatched   = "patched"
	OutcomeAllowed   = "allowed"
	OutcomeMalformed = "malformed"
)

// Reasons (the "reason" label) of OutcomeMalformed; decisions use the
// affinity.Reason values.
const (
	ReasonMethodNotAllowed = "method-not-allowed"
	ReasonBodyTooLarge     = "body-too-large"
	ReasonEmptyBody        = "empty-body"
	ReasonWrongContentType = "wrong-content-type"
	ReasonInvalidJSON      = "invalid-json"
	ReasonInvalidReview    = "invalid-review"
	ReasonNoRequest        = "no-request"
	ReasonNoUID            = "no-uid"
	// ReasonOverBudget: the bodies in flight were at their bound
	// (Options.InFlightBodyBytes); answered 503, so that call fails open.
	ReasonOverBudget = "over-budget"
)

// Metrics are the admission metrics (docs/operations.md, "Metrics"), labelled
// by outcome and reason only.
type Metrics struct {
	total    *prometheus.CounterVec
	duration prometheus.Histogram
	// lastPodReview, snatch_webhook_last_pod_review_timestamp_seconds, reads
	// lastPodReviewNanos: the arrival of the latest Pod CREATE review, in Unix
	// nanoseconds.
	lastPodReview      prometheus.GaugeFunc
	lastPodReviewNanos atomic.Int64
}

// processStart stands for the start of the process: package variables are
// initialized before main runs.
var processStart = time.Now()

// NewMetrics creates the admission metrics, every valid label pair at zero and
// the time of the last Pod review at the process's start, and registers them
// on reg.
func NewMetrics(reg prometheus.Registerer) (*Metrics, error) {
	return newMetrics(reg, processStart)
}

// newMetrics is NewMetrics with the start time given.
func newMetrics(reg prometheus.Registerer, started time.Time) (*Metrics, error) {
	var zero [][]string
	for _, r := range affinity.Reasons() {
		zero = append(zero, []string{outcomeOf(r), string(r)})
	}
	for _, r := range []string{ReasonMethodNotAllowed, ReasonBodyTooLarge, ReasonEmptyBody, ReasonWrongContentType,
		ReasonInvalidJSON, ReasonInvalidReview, ReasonNoRequest, ReasonNoUID, ReasonOverBudget} {
		zero = append(zero, []string{OutcomeMalformed, r})
	}
	m := &Metrics{
		total: metric.CounterVec("snatch_webhook_admission_total",
			"Admission requests handled, by outcome (patched, allowed, malformed) and reason.", []string{"outcome", "reason"}, zero...),
		duration: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name: "snatch_webhook_admission_duration_seconds",
			Help: "Time from reading the request headers to writing the response, TLS excluded.",
			// From the handler's own time up to the MWC's timeoutSeconds (2 s).
			Buckets: []float64{25e-6, 50e-6, 100e-6, 250e-6, 500e-6, 1e-3, 2.5e-3, 5e-3, 10e-3, 50e-3, 250e-3, 1, 2},
		}),
	}
	m.lastPodReviewNanos.Store(started.UnixNano())
	m.lastPodReview = prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name: "snatch_webhook_last_pod_review_timestamp_seconds",
		Help: "Unix time at which this replica last received an AdmissionReview of a Pod CREATE, whatever the " +
			"decision, taken when the request arrived; malformed and over-budget requests do not count. " +
			"The process's start time until the first.",
	}, func() float64 { return unixSeconds(m.lastPodReviewNanos.Load()) })
	if err := metric.Register(reg, "admission", m.total, m.duration, m.lastPodReview); err != nil {
		return nil, err
	}
	return m, nil
}

// unixSeconds converts Unix nanoseconds to the seconds a timestamp metric
// holds; the whole seconds apart, so that a time of whole milliseconds reads
// as written.
func unixSeconds(ns int64) float64 {
	const second = int64(time.Second)
	return float64(ns/second) + float64(ns%second)/float64(second)
}

// outcomeOf is a decision's outcome: only ReasonInjected comes with a patch.
func outcomeOf(r affinity.Reason) string {
	if r == affinity.ReasonInjected {
		return OutcomePatched
	}
	return OutcomeAllowed
}

func (m *Metrics) observe(outcome, reason string, d time.Duration) {
	if m != nil { // Options.Metrics is optional
		m.total.WithLabelValues(outcome, reason).Inc()
		m.duration.Observe(d.Seconds())
	}
}

// podReviewArrived records that a Pod CREATE review arrived at at. The time
// only moves forward: concurrent requests finish reading in any order, and a
// later one may be recorded first.
func (m *Metrics) podReviewArrived(at time.Time) {
	if m == nil {
		return
	}
	ns := at.UnixNano()
	for last := m.lastPodReviewNanos.Load(); ns > last; last = m.lastPodReviewNanos.Load() {
		if m.lastPodReviewNanos.CompareAndSwap(last, ns) {
			return
		}
	}
}

// RegisterPolicy exports the gauge snatch_webhook_policy_info{pool_label_key,
// worker_pool} = 1, which alerts join with the pools that exist
// (docs/operations.md, "Metrics").
func RegisterPolicy(reg prometheus.Registerer, p affinity.Policy) error {
	g := prometheus.NewGauge(prometheus.GaugeOpts{
		Name:        "snatch_webhook_policy_info",
		Help:        "The pool label key and worker pool that the webhook's term prefers; always 1.",
		ConstLabels: prometheus.Labels{"pool_label_key": p.PoolLabelKey, "worker_pool": p.WorkerPool},
	})
	g.Set(1)
	if err := reg.Register(g); err != nil {
		return fmt.Errorf("register the policy metric: %w", err)
	}
	return nil
}

// RegisterBuildInfo exports the gauge snatch_webhook_build_info{version,
// revision, goversion} = 1.
func RegisterBuildInfo(reg prometheus.Registerer) error {
	return version.RegisterBuildInfo(reg, "snatch_webhook_build_info", "snatch-webhook")
}

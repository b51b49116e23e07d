package admission

import (
	"fmt"
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
}

// NewMetrics creates the admission metrics, every valid label pair at zero, and
// registers them on reg.
func NewMetrics(reg prometheus.Registerer) (*Metrics, error) {
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
	if err := metric.Register(reg, "admission", m.total, m.duration); err != nil {
		return nil, err
	}
	return m, nil
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

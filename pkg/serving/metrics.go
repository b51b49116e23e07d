package serving

import (
	"fmt"

	"github.com/prometheus/client_golang/prometheus"
)

// Results of a certificate reload, the "result" label of
// snatch_webhook_cert_reloads_total.
const (
	ReloadSuccess = "success"
	ReloadError   = "error"
)

// CertMetrics are the serving certificate's metrics (docs/operations.md, "Metrics").
type CertMetrics struct {
	reloads  *prometheus.CounterVec
	notAfter prometheus.Gauge
}

// NewCertMetrics creates the certificate metrics and registers them on reg.
func NewCertMetrics(reg prometheus.Registerer) (*CertMetrics, error) {
	m := &CertMetrics{
		reloads: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "snatch_webhook_cert_reloads_total",
			Help: "Loads of the serving certificate and key that changed the served pair (success) or failed and kept the last good pair (error).",
		}, []string{"result"}),
		notAfter: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "snatch_webhook_serving_cert_not_after_seconds",
			Help: "Expiry (notAfter) of the served certificate, in seconds since the Unix epoch; 0 until one has loaded.",
		}),
	}
	for _, c := range []prometheus.Collector{m.reloads, m.notAfter} {
		if err := reg.Register(c); err != nil {
			return nil, fmt.Errorf("register certificate metrics: %w", err)
		}
	}
	m.reloads.WithLabelValues(ReloadSuccess)
	m.reloads.WithLabelValues(ReloadError)
	return m, nil
}

func (m *CertMetrics) reloaded(notAfterUnix int64) {
	if m == nil {
		return
	}
	m.reloads.WithLabelValues(ReloadSuccess).Inc()
	m.notAfter.Set(float64(notAfterUnix))
}

func (m *CertMetrics) failed() {
	if m == nil {
		return
	}
	m.reloads.WithLabelValues(ReloadError).Inc()
}

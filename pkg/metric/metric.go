// Package metric holds the two steps of every metrics constructor of both
// binaries: counters whose series exist at zero, so that rate() works on the
// first event, and registration on a registry passed in, never a global one.
package metric

import (
	"fmt"

	"github.com/prometheus/client_golang/prometheus"
)

// CounterVec returns a counter with the labels, and the series of each of
// zero, a list of label values, created at zero.
func CounterVec(name, help string, labels []string, zero ...[]string) *prometheus.CounterVec {
	c := prometheus.NewCounterVec(prometheus.CounterOpts{Name: name, Help: help}, labels)
	for _, values := range zero {
		c.WithLabelValues(values...)
	}
	return c
}

// Gauge returns a gauge without labels.
func Gauge(name, help string) prometheus.Gauge {
	return prometheus.NewGauge(prometheus.GaugeOpts{Name: name, Help: help})
}

// Register registers cs on reg; its error names what they measure.
func Register(reg prometheus.Registerer, what string, cs ...prometheus.Collector) error {
	for _, c := range cs {
		if err := reg.Register(c); err != nil {
			return fmt.Errorf("register %s metrics: %w", what, err)
		}
	}
	return nil
}

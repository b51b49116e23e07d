// Package metrictest holds what the metrics tests of both binaries check
// of a constructor that follows package metric: its series exist before
// anything is counted, on the registry passed in, where a second
// registration is an error.
//
// It is imported by tests only.
package metrictest

import (
	"testing"

	"github.com/prometheus/client_golang/prometheus"
)

// SeriesAtStart calls newMetrics on a new registry and returns how many
// series each metric family has there, by name, before anything is
// counted. It fails t when newMetrics fails, or when a second call on the
// same registry does not.
func SeriesAtStart[M any](t testing.TB, newMetrics func(prometheus.Registerer) (M, error)) map[string]int {
	t.Helper()
	reg := prometheus.NewRegistry()
	if _, err := newMetrics(reg); err != nil {
		t.Fatal(err)
	}
	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	series := map[string]int{}
	for _, f := range families {
		series[f.GetName()] = len(f.GetMetric())
	}
	if _, err := newMetrics(reg); err == nil {
		t.Error("registering twice on one registry succeeded")
	}
	return series
}

package syncer

import (
	"slices"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
)

func TestNewMetricsRegistersEveryMetricWithEveryErrorReason(t *testing.T) {
	reg := prometheus.NewRegistry()
	if _, err := NewMetrics(reg); err != nil {
		t.Fatal(err)
	}
	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	errorSeries := 0
	for _, f := range families {
		names = append(names, f.GetName())
		if f.GetName() == "cabundle_syncer_errors_total" {
			errorSeries = len(f.GetMetric())
		}
	}
	want := []string{
		"cabundle_syncer_apply_entries_released_total",
		"cabundle_syncer_bundle_certificates",
		"cabundle_syncer_ca_not_after_seconds",
		"cabundle_syncer_emergency_disabled",
		"cabundle_syncer_errors_total",
		"cabundle_syncer_in_sync",
		"cabundle_syncer_is_leader",
		"cabundle_syncer_source_valid",
		"cabundle_syncer_updates_total",
		"cabundle_syncer_webhook_configuration_found",
	}
	if !slices.Equal(names, want) {
		t.Errorf("metrics = %v, want %v", names, want)
	}
	if errorSeries != len(errorReasons()) {
		t.Errorf("cabundle_syncer_errors_total has %d series, want one per reason (%d)", errorSeries, len(errorReasons()))
	}
	// A second registration on the same registry is an error, not a panic.
	if _, err := NewMetrics(reg); err == nil {
		t.Error("registering twice succeeded")
	}
}

package syncer

import (
	"maps"
	"slices"
	"testing"

	"github.com/kyma-project/kim-snatch/pkg/metric/metrictest"
)

func TestNewMetricsRegistersEveryMetricWithEveryErrorReason(t *testing.T) {
	series := metrictest.SeriesAtStart(t, NewMetrics)
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
	if names := slices.Sorted(maps.Keys(series)); !slices.Equal(names, want) {
		t.Errorf("metrics = %v, want %v", names, want)
	}
	if got := series["cabundle_syncer_errors_total"]; got != len(errorReasons()) {
		t.Errorf("cabundle_syncer_errors_total has %d series, want one per reason (%d)", got, len(errorReasons()))
	}
}

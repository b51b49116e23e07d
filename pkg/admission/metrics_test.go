package admission

import (
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
)

// counterValue reads one counter of the vector.
func counterValue(t testing.TB, m *Metrics, outcome, reason string) float64 {
	t.Helper()
	var out dto.Metric
	if err := m.total.WithLabelValues(outcome, reason).(prometheus.Metric).Write(&out); err != nil {
		t.Fatal(err)
	}
	return out.GetCounter().GetValue()
}

func TestNewMetrics_registers_every_label_pair_at_zero(t *testing.T) {
	reg := prometheus.NewRegistry()
	if _, err := NewMetrics(reg); err != nil {
		t.Fatal(err)
	}
	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]int{}
	for _, f := range families {
		got[f.GetName()] = len(f.GetMetric())
	}
	if got["snatch_webhook_admission_total"] != 7+len(malformedReasons) {
		t.Errorf("snatch_webhook_admission_total has %d series, want %d", got["snatch_webhook_admission_total"], 7+len(malformedReasons))
	}
	if got["snatch_webhook_admission_duration_seconds"] != 1 {
		t.Errorf("snatch_webhook_admission_duration_seconds missing: %v", got)
	}
	if _, err := NewMetrics(reg); err == nil {
		t.Error("registering twice on one registry succeeded")
	}
}

package admission

import (
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"

	"github.com/kyma-project/kim-snatch/pkg/affinity"
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

func TestNewMetricsRegistersEveryLabelPairAtZero(t *testing.T) {
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
	malformed := []string{ReasonMethodNotAllowed, ReasonBodyTooLarge, ReasonEmptyBody, ReasonWrongContentType,
		ReasonInvalidJSON, ReasonInvalidReview, ReasonNoRequest, ReasonNoUID}
	if want := len(affinity.Reasons()) + len(malformed); got["snatch_webhook_admission_total"] != want {
		t.Errorf("snatch_webhook_admission_total has %d series, want %d", got["snatch_webhook_admission_total"], want)
	}
	if got["snatch_webhook_admission_duration_seconds"] != 1 {
		t.Errorf("snatch_webhook_admission_duration_seconds missing: %v", got)
	}
	if _, err := NewMetrics(reg); err == nil {
		t.Error("registering twice on one registry succeeded")
	}
}

func TestRegisterPolicyExportsThePoolTheTermPrefers(t *testing.T) {
	reg := prometheus.NewRegistry()
	p := affinity.Policy{PoolLabelKey: "example.com/pool", WorkerPool: "system", Weight: 5}
	if err := RegisterPolicy(reg, p); err != nil {
		t.Fatal(err)
	}
	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	if len(families) != 1 || families[0].GetName() != "snatch_webhook_policy_info" || len(families[0].GetMetric()) != 1 {
		t.Fatalf("gathered %v, want one snatch_webhook_policy_info series", families)
	}
	m := families[0].GetMetric()[0]
	labels := map[string]string{}
	for _, l := range m.GetLabel() {
		labels[l.GetName()] = l.GetValue()
	}
	if labels["pool_label_key"] != "example.com/pool" || labels["worker_pool"] != "system" || len(labels) != 2 {
		t.Errorf("labels %v, want pool_label_key=example.com/pool and worker_pool=system only", labels)
	}
	if v := m.GetGauge().GetValue(); v != 1 {
		t.Errorf("value %v, want 1", v)
	}
}

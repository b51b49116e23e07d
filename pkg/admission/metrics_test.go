package admission

import (
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/kyma-project/kim-snatch/pkg/affinity"
)

// counterValue reads one counter of the vector.
func counterValue(m *Metrics, outcome, reason string) float64 {
	return testutil.ToFloat64(m.total.WithLabelValues(outcome, reason))
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
		ReasonInvalidJSON, ReasonInvalidReview, ReasonNoRequest, ReasonNoUID, ReasonOverBudget}
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
	want := `# HELP snatch_webhook_policy_info The pool label key and worker pool that the webhook's term prefers; always 1.
# TYPE snatch_webhook_policy_info gauge
snatch_webhook_policy_info{pool_label_key="example.com/pool",worker_pool="system"} 1
`
	if err := testutil.GatherAndCompare(reg, strings.NewReader(want)); err != nil {
		t.Error(err)
	}
}

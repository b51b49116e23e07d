package stack

import (
	"bytes"
	"context"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"k8s.io/client-go/kubernetes"
)

// FailOpenCount returns kube-apiserver's
// apiserver_admission_webhook_fail_open_count for the webhook entry: how
// often a call to the webhook failed and the Pod was admitted without it.
// A series that does not exist yet counts 0.
func FailOpenCount(ctx context.Context, cs kubernetes.Interface, webhook string) (float64, error) {
	body, err := cs.CoreV1().RESTClient().Get().AbsPath("/metrics").DoRaw(ctx)
	if err != nil {
		return 0, err
	}
	families, err := ParseMetrics(body)
	if err != nil {
		return 0, err
	}
	return CounterSum(families, "apiserver_admission_webhook_fail_open_count", map[string]string{"name": webhook}), nil
}

// ParseMetrics reads a text exposition, such as a component's /metrics.
func ParseMetrics(exposition []byte) (map[string]*dto.MetricFamily, error) {
	p := expfmt.NewTextParser(model.UTF8Validation)
	return p.TextToMetricFamilies(bytes.NewReader(exposition))
}

// CounterSum adds up the counter name over the series whose labels hold
// every pair of labels; 0 when there is none.
func CounterSum(families map[string]*dto.MetricFamily, name string, labels map[string]string) float64 {
	total := 0.0
	for _, m := range families[name].GetMetric() {
		matched := 0
		for _, l := range m.GetLabel() {
			if v, ok := labels[l.GetName()]; ok && v == l.GetValue() {
				matched++
			}
		}
		if matched == len(labels) {
			total += m.GetCounter().GetValue()
		}
	}
	return total
}

package stack

import "testing"

// exposition is kube-apiserver's text format: the fail-open counter of an
// entry, of another entry whose name starts with the same string, and of
// the same entry as a validating webhook, one sample with a timestamp.
var exposition = []byte(`# HELP apiserver_admission_webhook_fail_open_count [ALPHA] Admission webhook fail open count
# TYPE apiserver_admission_webhook_fail_open_count counter
apiserver_admission_webhook_fail_open_count{name="a.example.com",type="admit"} 3
apiserver_admission_webhook_fail_open_count{name="a.example.com.other",type="admit"} 50 1700000000000
apiserver_admission_webhook_fail_open_count{name="a.example.com",type="validating"} 1000
`)

func TestCounterSumAddsTheSeriesOfTheEntry(t *testing.T) {
	families, err := ParseMetrics(exposition)
	if err != nil {
		t.Fatal(err)
	}
	const counter = "apiserver_admission_webhook_fail_open_count"
	if got := CounterSum(families, counter, map[string]string{"name": "a.example.com", "type": "admit"}); got != 3 {
		t.Errorf("fail-open count of a.example.com: %v; want 3", got)
	}
	if got := CounterSum(families, counter, map[string]string{"name": "a.example.com"}); got != 1003 {
		t.Errorf("fail-open count of a.example.com of either type: %v; want 1003", got)
	}
	if got := CounterSum(families, counter, map[string]string{"name": "b.example.com"}); got != 0 {
		t.Errorf("fail-open count of an entry that was never called: %v; want 0", got)
	}
}

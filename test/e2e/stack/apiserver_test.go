package stack

import "testing"

// exposition is kube-apiserver's text format: a histogram whose le="1"
// bucket sits beside le="1.5", another entry whose name starts with the
// same string, the same entry as a validating webhook, a sample with a
// timestamp, and a counter.
var exposition = []byte(`# HELP apiserver_admission_webhook_admission_duration_seconds [STABLE] Admission webhook latency
# TYPE apiserver_admission_webhook_admission_duration_seconds histogram
apiserver_admission_webhook_admission_duration_seconds_bucket{name="a.example.com",operation="CREATE",rejected="false",type="admit",le="1"} 7
apiserver_admission_webhook_admission_duration_seconds_bucket{name="a.example.com",operation="CREATE",rejected="false",type="admit",le="1.5"} 9
apiserver_admission_webhook_admission_duration_seconds_bucket{name="a.example.com",operation="CREATE",rejected="false",type="admit",le="+Inf"} 10
apiserver_admission_webhook_admission_duration_seconds_sum{name="a.example.com",operation="CREATE",rejected="false",type="admit"} 4.5
apiserver_admission_webhook_admission_duration_seconds_count{name="a.example.com",operation="CREATE",rejected="false",type="admit"} 10 1700000000000
apiserver_admission_webhook_admission_duration_seconds_bucket{name="a.example.com",operation="CREATE",rejected="true",type="admit",le="1"} 2
apiserver_admission_webhook_admission_duration_seconds_bucket{name="a.example.com",operation="CREATE",rejected="true",type="admit",le="1.5"} 2
apiserver_admission_webhook_admission_duration_seconds_bucket{name="a.example.com",operation="CREATE",rejected="true",type="admit",le="+Inf"} 2
apiserver_admission_webhook_admission_duration_seconds_sum{name="a.example.com",operation="CREATE",rejected="true",type="admit"} 0.5
apiserver_admission_webhook_admission_duration_seconds_count{name="a.example.com",operation="CREATE",rejected="true",type="admit"} 2
apiserver_admission_webhook_admission_duration_seconds_bucket{name="a.example.com.other",operation="CREATE",rejected="false",type="admit",le="1"} 100
apiserver_admission_webhook_admission_duration_seconds_bucket{name="a.example.com.other",operation="CREATE",rejected="false",type="admit",le="1.5"} 100
apiserver_admission_webhook_admission_duration_seconds_bucket{name="a.example.com.other",operation="CREATE",rejected="false",type="admit",le="+Inf"} 100
apiserver_admission_webhook_admission_duration_seconds_sum{name="a.example.com.other",operation="CREATE",rejected="false",type="admit"} 1
apiserver_admission_webhook_admission_duration_seconds_count{name="a.example.com.other",operation="CREATE",rejected="false",type="admit"} 100
apiserver_admission_webhook_admission_duration_seconds_bucket{name="a.example.com",operation="CREATE",rejected="false",type="validating",le="1"} 1000
apiserver_admission_webhook_admission_duration_seconds_bucket{name="a.example.com",operation="CREATE",rejected="false",type="validating",le="1.5"} 1000
apiserver_admission_webhook_admission_duration_seconds_bucket{name="a.example.com",operation="CREATE",rejected="false",type="validating",le="+Inf"} 1000
apiserver_admission_webhook_admission_duration_seconds_sum{name="a.example.com",operation="CREATE",rejected="false",type="validating"} 1
apiserver_admission_webhook_admission_duration_seconds_count{name="a.example.com",operation="CREATE",rejected="false",type="validating"} 1000
# HELP apiserver_admission_webhook_fail_open_count [ALPHA] Admission webhook fail open count
# TYPE apiserver_admission_webhook_fail_open_count counter
apiserver_admission_webhook_fail_open_count{name="a.example.com",type="admit"} 3
apiserver_admission_webhook_fail_open_count{name="a.example.com.other",type="admit"} 50
`)

func TestHistogramCountsAndCounterSum(t *testing.T) {
	families, err := ParseMetrics(exposition)
	if err != nil {
		t.Fatal(err)
	}
	const histogram = "apiserver_admission_webhook_admission_duration_seconds"
	entry := map[string]string{"name": "a.example.com", "type": "admit"}
	all, within, err := HistogramCounts(families, histogram, entry, 1)
	if err != nil || all != 12 || within != 9 {
		t.Errorf("HistogramCounts(a.example.com, le 1) = %d, %d, %v; want 12 and 9", all, within, err)
	}
	if all, within, err = HistogramCounts(families, histogram, entry, 1.5); err != nil || all != 12 || within != 11 {
		t.Errorf("HistogramCounts(a.example.com, le 1.5) = %d, %d, %v; want 12 and 11", all, within, err)
	}
	if _, _, err := HistogramCounts(families, histogram, entry, 2); err == nil {
		t.Error(`HistogramCounts found an le="2" bucket the exposition does not have`)
	}
	if got := CounterSum(families, "apiserver_admission_webhook_fail_open_count", entry); got != 3 {
		t.Errorf("fail-open count of a.example.com: %v; want 3", got)
	}
	if got := CounterSum(families, "apiserver_admission_webhook_fail_open_count", map[string]string{"name": "b.example.com"}); got != 0 {
		t.Errorf("fail-open count of an entry that was never called: %v; want 0", got)
	}
}

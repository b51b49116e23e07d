package stack

import "testing"

// exposition is kube-apiserver's text format: a histogram whose le="1"
// bucket sits beside le="1.5", another entry whose name starts with the
// same string, a sample with a timestamp, and a counter.
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
# HELP apiserver_admission_webhook_fail_open_count [ALPHA] Admission webhook fail open count
# TYPE apiserver_admission_webhook_fail_open_count counter
apiserver_admission_webhook_fail_open_count{name="a.example.com",type="admit"} 3
apiserver_admission_webhook_fail_open_count{name="a.example.com.other",type="admit"} 50
`)

func TestSeries(t *testing.T) {
	families, err := ParseMetrics(exposition)
	if err != nil {
		t.Fatal(err)
	}
	const histogram = "apiserver_admission_webhook_admission_duration_seconds"
	entry := map[string]string{"name": "a.example.com", "type": "admit"}
	var all, within uint64
	for _, m := range Series(families, histogram, entry) {
		all += m.GetHistogram().GetSampleCount()
		n, ok := BucketCount(m.GetHistogram(), 1)
		if !ok {
			t.Fatalf("%s has no le=\"1\" bucket", histogram)
		}
		within += n
	}
	if all != 12 || within != 9 {
		t.Errorf("%s of a.example.com: %d calls, %d within 1 s; want 12 and 9", histogram, all, within)
	}
	if _, ok := BucketCount(Series(families, histogram, entry)[0].GetHistogram(), 2); ok {
		t.Error("BucketCount found an le=\"2\" bucket the exposition does not have")
	}
	if n := len(Series(families, "apiserver_admission_webhook_fail_open_count", map[string]string{"name": "b.example.com"})); n != 0 {
		t.Errorf("fail-open series of an entry that was never called: %d; want 0", n)
	}
	open := Series(families, "apiserver_admission_webhook_fail_open_count", entry)
	if len(open) != 1 || open[0].GetCounter().GetValue() != 3 {
		t.Errorf("fail-open series of a.example.com: %v; want one of 3", open)
	}
}

package stack

import "testing"

func TestSumSamples(t *testing.T) {
	exposition := []byte(`# HELP apiserver_admission_webhook_admission_duration_seconds [STABLE] Admission webhook latency
# TYPE apiserver_admission_webhook_admission_duration_seconds histogram
apiserver_admission_webhook_admission_duration_seconds_bucket{name="a.example.com",operation="CREATE",rejected="false",type="admit",le="1"} 7
apiserver_admission_webhook_admission_duration_seconds_bucket{name="a.example.com",operation="CREATE",rejected="true",type="admit",le="1"} 2
apiserver_admission_webhook_admission_duration_seconds_bucket{name="a.example.com",operation="CREATE",rejected="false",type="admit",le="1.5"} 9
apiserver_admission_webhook_admission_duration_seconds_bucket{name="a.example.com.other",operation="CREATE",rejected="false",type="admit",le="1"} 100
apiserver_admission_webhook_admission_duration_seconds_bucket{name="a.example.com",operation="CREATE",rejected="false",type="validating",le="1"} 1000
apiserver_admission_webhook_admission_duration_seconds_count{name="a.example.com",operation="CREATE",rejected="false",type="admit"} 12 1700000000000
apiserver_admission_webhook_fail_open_count{name="a.example.com",type="admit"} 3
apiserver_admission_webhook_fail_open_count_total{name="a.example.com",type="admit"} 50
`)
	for _, tt := range []struct {
		metric string
		labels []string
		want   float64
	}{
		{"apiserver_admission_webhook_admission_duration_seconds_bucket", []string{`name="a.example.com"`, `type="admit"`, `le="1"`}, 9},
		{"apiserver_admission_webhook_admission_duration_seconds_bucket", []string{`le="1.5"`}, 9},
		{"apiserver_admission_webhook_admission_duration_seconds_count", []string{`name="a.example.com"`}, 12},
		{"apiserver_admission_webhook_fail_open_count", []string{`name="a.example.com"`}, 3},
		{"apiserver_admission_webhook_fail_open_count", []string{`name="b.example.com"`}, 0},
	} {
		got, err := SumSamples(exposition, tt.metric, tt.labels...)
		if err != nil || got != tt.want {
			t.Errorf("SumSamples(%s, %v) = %v, %v; want %v", tt.metric, tt.labels, got, err, tt.want)
		}
	}
}

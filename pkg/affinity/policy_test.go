package affinity

import "testing"

func TestWorkerPoolFromArgsFindsTheLastWorkerPoolFlag(t *testing.T) {
	tests := []struct {
		name    string
		args    []string
		want    string
		wantSet bool
	}{
		{name: "equals_form", args: []string{"--cert-dir=/certs", "--worker-pool=pool-b"}, want: "pool-b", wantSet: true},
		{name: "separate_value", args: []string{"--worker-pool", "pool-b"}, want: "pool-b", wantSet: true},
		{name: "single_dash", args: []string{"-worker-pool", "pool-b"}, want: "pool-b", wantSet: true},
		{name: "after_other_flags_with_values", args: []string{"--cert-dir", "/certs", "--enable-http2", "--worker-pool", "pool-b", "--zap-log-level=info"}, want: "pool-b", wantSet: true},
		{name: "last_one_wins", args: []string{"--worker-pool=pool-a", "--worker-pool", "pool-b"}, want: "pool-b", wantSet: true},
		{name: "next_to_the_other_policy_flags", args: []string{"--affinity-weight", "20", "--pool-label-key=k", "--worker-pool=pool-b"}, want: "pool-b", wantSet: true},
		{name: "not_set", args: []string{"--cert-dir", "/certs"}, want: DefaultWorkerPool, wantSet: false},
		{name: "no_args", want: DefaultWorkerPool, wantSet: false},
		{name: "after_the_end_of_flags", args: []string{"--", "--worker-pool=pool-b"}, want: DefaultWorkerPool, wantSet: false},
		{name: "bad_syntax_is_stepped_over", args: []string{"---x", "--worker-pool=pool-b"}, want: "pool-b", wantSet: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, set := WorkerPoolFromArgs(tt.args)
			if got != tt.want || set != tt.wantSet {
				t.Errorf("WorkerPoolFromArgs(%q) = %q, %v; want %q, %v", tt.args, got, set, tt.want, tt.wantSet)
			}
		})
	}
}

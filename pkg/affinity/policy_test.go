package affinity

import "testing"

func TestWorkerPoolFromArgsFindsTheLastWorkerPoolFlag(t *testing.T) {
	tests := []struct {
		name    string
		args    []string
		want    string
		wantSet bool
	}{
		{name: "equals_form_is_found", args: []string{"--cert-dir=/certs", "--worker-pool=pool-b"}, want: "pool-b", wantSet: true},
		{name: "separate_value_is_found", args: []string{"--worker-pool", "pool-b"}, want: "pool-b", wantSet: true},
		{name: "single_dash_is_found", args: []string{"-worker-pool", "pool-b"}, want: "pool-b", wantSet: true},
		{name: "flag_after_other_flags_with_values_is_found", args: []string{"--cert-dir", "/certs", "--enable-http2", "--worker-pool", "pool-b", "--zap-log-level=info"}, want: "pool-b", wantSet: true},
		{name: "last_one_wins", args: []string{"--worker-pool=pool-a", "--worker-pool", "pool-b"}, want: "pool-b", wantSet: true},
		{name: "flag_next_to_the_other_policy_flags_is_found", args: []string{"--affinity-weight", "20", "--pool-label-key=k", "--worker-pool=pool-b"}, want: "pool-b", wantSet: true},
		{name: "not_set_gives_the_default", args: []string{"--cert-dir", "/certs"}, want: DefaultWorkerPool, wantSet: false},
		{name: "no_args_give_the_default", want: DefaultWorkerPool, wantSet: false},
		{name: "flag_after_the_end_of_flags_is_ignored", args: []string{"--", "--worker-pool=pool-b"}, want: DefaultWorkerPool, wantSet: false},
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

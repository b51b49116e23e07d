package check

import (
	"testing"
)

func TestFailOnAcceptsWarnAndFailOnly(t *testing.T) {
	tests := []struct {
		name    string
		text    string
		want    FailOn
		wantErr bool
	}{
		{name: "warn_is_accepted", text: "warn", want: FailOnWarn},
		{name: "fail_is_accepted", text: "fail", want: FailOnFail},
		{name: "empty_is_refused", text: "", wantErr: true},
		{name: "upper_case_is_refused", text: "FAIL", wantErr: true},
		{name: "padded_is_refused", text: " fail", wantErr: true},
		{name: "status_that_is_no_threshold_is_refused", text: "skip", wantErr: true},
		{name: "incomplete_is_refused", text: "incomplete", wantErr: true},
		{name: "exit_code_is_refused", text: "2", wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := FailOn("unset")
			err := f.UnmarshalText([]byte(tt.text))
			if tt.wantErr {
				if err == nil {
					t.Fatalf("%q parsed as %q, want an error", tt.text, f)
				}
				if f != "unset" {
					t.Errorf("a refused value changed the threshold to %q", f)
				}
				return
			}
			if err != nil || f != tt.want {
				t.Fatalf("%q parsed as %q, %v; want %q", tt.text, f, err, tt.want)
			}
			if b, _ := f.MarshalText(); string(b) != tt.text {
				t.Errorf("%q marshals as %q", f, b)
			}
		})
	}
}

func TestExitCodeAtEachThreshold(t *testing.T) {
	tests := []struct {
		name     string
		statuses []Status
		wantWarn int // at --fail-on=warn
		wantFail int // at --fail-on=fail
	}{
		{name: "pass_exits_0", statuses: []Status{StatusPass, StatusPass}, wantWarn: 0, wantFail: 0},
		{name: "warn_exits_1_at_warn_and_0_at_fail", statuses: []Status{StatusPass, StatusWarn}, wantWarn: 1, wantFail: 0},
		{name: "fail_exits_2_at_either", statuses: []Status{StatusPass, StatusFail}, wantWarn: 2, wantFail: 2},
		{name: "fail_beside_warn_exits_2_at_either", statuses: []Status{StatusWarn, StatusFail}, wantWarn: 2, wantFail: 2},
		{name: "skip_is_incomplete", statuses: []Status{StatusPass, StatusSkip}, wantWarn: 4, wantFail: 4},
		{name: "skip_beside_warn_is_incomplete", statuses: []Status{StatusWarn, StatusSkip}, wantWarn: 4, wantFail: 4},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := reportOf(tt.statuses...)
			if got := r.ExitCodeAt(FailOnWarn); got != tt.wantWarn {
				t.Errorf("%s report at warn: exit %d, want %d", r.Status, got, tt.wantWarn)
			}
			if got := r.ExitCodeAt(FailOnFail); got != tt.wantFail {
				t.Errorf("%s report at fail: exit %d, want %d", r.Status, got, tt.wantFail)
			}
			if got := r.ExitCode(); got != tt.wantWarn {
				t.Errorf("%s report: ExitCode %d, want the default threshold's %d", r.Status, got, tt.wantWarn)
			}
		})
	}
}

// At --fail-on=fail a report exits 0 exactly when its code passes a gate
// (ExitCodes), so that the CronJob's Job fails only where a gate would.
func TestFailOnFailExitsZeroExactlyWhereAGatePasses(t *testing.T) {
	passes := map[int]bool{}
	for _, e := range ExitCodes() {
		passes[e.Code] = e.PassesGate
	}
	for _, s := range []Status{StatusPass, StatusWarn, StatusFail, StatusSkip} {
		r := reportOf(s)
		if zero := r.ExitCodeAt(FailOnFail) == ExitPass; zero != passes[r.ExitCode()] {
			t.Errorf("%s report: exits 0 at fail: %v, but its code %d passes a gate: %v", r.Status, zero, r.ExitCode(), passes[r.ExitCode()])
		}
	}
}

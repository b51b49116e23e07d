package cmdline

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io"
	"testing"

	"github.com/kyma-project/kim-snatch/pkg/cmdline/cmdlinetest"
)

func TestParseFlagsRefusesUnknownFlagsAndArguments(t *testing.T) {
	tests := []struct {
		name      string
		args      []string
		wantErr   []string
		wantUsage bool
		wantHelp  bool
	}{
		{name: "flags_only_parse", args: []string{"--port=1"}},
		{name: "unknown_flag_is_a_usage_error", args: []string{"--nope"}, wantErr: []string{"flag provided but not defined"}, wantUsage: true},
		{name: "bad_value_is_a_usage_error", args: []string{"--port=x"}, wantErr: []string{"invalid value"}, wantUsage: true},
		{name: "positional_argument_is_a_usage_error", args: []string{"--port=1", "extra"}, wantErr: []string{`unexpected arguments: ["extra"]`}, wantUsage: true},
		{name: "help_returns_err_help", args: []string{"-h"}, wantHelp: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fs := flag.NewFlagSet("test", flag.ContinueOnError)
			fs.SetOutput(io.Discard)
			fs.Int("port", 0, "")
			err := ParseFlags(fs, tt.args)
			if tt.wantHelp {
				if !errors.Is(err, flag.ErrHelp) {
					t.Fatalf("ParseFlags() = %v, want flag.ErrHelp", err)
				}
				return
			}
			cmdlinetest.MentionsEach(t, err, tt.wantErr)
			if len(tt.wantErr) == 0 {
				return
			}
			var ue UsageError
			if got := errors.As(err, &ue); got != tt.wantUsage {
				t.Fatalf("errors.As(UsageError) = %v, want %v", got, tt.wantUsage)
			}
		})
	}
}

func TestExitCodeFollowsTheKindOfError(t *testing.T) {
	tests := []struct {
		name       string
		err        error
		want       int
		wantStderr string
	}{
		{name: "success_exits_0", err: nil, want: 0},
		{name: "help_exits_0", err: flag.ErrHelp, want: 0},
		{name: "usage_error_exits_64", err: UsageError{errors.New("bad flag")}, want: 64, wantStderr: "bin: bad flag\n"},
		{name: "wrapped_usage_error_exits_64", err: fmt.Errorf("parse: %w", UsageError{errors.New("bad flag")}), want: 64, wantStderr: "bin: parse: bad flag\n"},
		{name: "runtime_error_exits_1", err: errors.New("listen: address in use"), want: 1, wantStderr: "bin: listen: address in use\n"},
		{name: "quiet_exit_error_exits_2_printing_nothing", err: ExitError{Code: 2}, want: 2},
		{name: "exit_error_with_a_message_exits_3_printing_it", err: ExitError{Code: 3, Err: errors.New("no cluster")}, want: 3, wantStderr: "bin: no cluster\n"},
		{name: "wrapped_quiet_exit_error_exits_1", err: fmt.Errorf("check: %w", ExitError{Code: 1}), want: 1},
		{name: "exit_code_overrides_usage", err: ExitError{Code: 3, Err: UsageError{errors.New("bad flag")}}, want: 3, wantStderr: "bin: bad flag\n"},
		{name: "exit_error_of_code_0_exits_0", err: ExitError{Code: 0}, want: 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var stderr bytes.Buffer
			if got := ExitCode("bin", tt.err, &stderr); got != tt.want {
				t.Errorf("ExitCode() = %d, want %d", got, tt.want)
			}
			if stderr.String() != tt.wantStderr {
				t.Errorf("stderr = %q, want %q", stderr.String(), tt.wantStderr)
			}
		})
	}
}

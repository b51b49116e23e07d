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
		{name: "flags_only", args: []string{"--port=1"}},
		{name: "unknown_flag", args: []string{"--nope"}, wantErr: []string{"flag provided but not defined"}, wantUsage: true},
		{name: "bad_value", args: []string{"--port=x"}, wantErr: []string{"invalid value"}, wantUsage: true},
		{name: "positional_argument", args: []string{"--port=1", "extra"}, wantErr: []string{`unexpected arguments: ["extra"]`}, wantUsage: true},
		{name: "help", args: []string{"-h"}, wantHelp: true},
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
		{name: "success", err: nil, want: 0},
		{name: "help", err: flag.ErrHelp, want: 0},
		{name: "usage", err: UsageError{errors.New("bad flag")}, want: 64, wantStderr: "bin: bad flag\n"},
		{name: "wrapped_usage", err: fmt.Errorf("parse: %w", UsageError{errors.New("bad flag")}), want: 64, wantStderr: "bin: parse: bad flag\n"},
		{name: "runtime", err: errors.New("listen: address in use"), want: 1, wantStderr: "bin: listen: address in use\n"},
		{name: "exit_code_quiet", err: ExitError{Code: 2}, want: 2},
		{name: "exit_code_with_message", err: ExitError{Code: 3, Err: errors.New("no cluster")}, want: 3, wantStderr: "bin: no cluster\n"},
		{name: "wrapped_quiet_exit_code", err: fmt.Errorf("check: %w", ExitError{Code: 1}), want: 1},
		{name: "exit_code_overrides_usage", err: ExitError{Code: 3, Err: UsageError{errors.New("bad flag")}}, want: 3, wantStderr: "bin: bad flag\n"},
		{name: "exit_code_zero", err: ExitError{Code: 0}, want: 0},
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

package cmdline

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"strings"
	"testing"
)

type testOptions struct {
	Name    string
	Version bool
}

func (o *testOptions) BindFlags(fs *flag.FlagSet) {
	fs.StringVar(&o.Name, "name", o.Name, "A name.")
	fs.BoolVar(&o.Version, "version", false, "Print the version.")
}

func (o testOptions) Validate() error {
	if o.Name == "" {
		return errors.New("--name must not be empty")
	}
	return nil
}

func testRoot(ran *testOptions, sub *[]string) Root[testOptions, *testOptions] {
	run := func(_ context.Context, o testOptions) error {
		*ran = o
		return nil
	}
	return NewRoot("tool", "Does one thing.", func() testOptions { return testOptions{Name: "default"} }, run,
		Subcommand{Name: "sub", Summary: "A verb.", Run: func(_ context.Context, args []string) error {
			*sub = args
			return nil
		}})
}

func TestRootExecuteRunsValidOptionsOrFailsWithAUsageError(t *testing.T) {
	tests := []struct {
		name     string
		args     []string
		wantRun  *testOptions
		wantSub  []string
		wantCode int
		wantOut  string
		wantErr  string
	}{
		{name: "defaults_run", wantRun: &testOptions{Name: "default"}},
		{name: "flags_run", args: []string{"--name=x"}, wantRun: &testOptions{Name: "x"}},
		{name: "invalid_is_a_usage_error", args: []string{"--name="}, wantCode: 64, wantErr: "--name must not be empty"},
		{name: "unknown_flag_is_a_usage_error", args: []string{"--nope"}, wantCode: 64, wantErr: "flag provided but not defined: -nope"},
		{name: "positional_argument_is_a_usage_error", args: []string{"--name=x", "extra"}, wantCode: 64, wantErr: `unexpected arguments: ["extra"]`},
		{name: "subcommand_gets_its_arguments", args: []string{"sub", "--a", "b"}, wantSub: []string{"--a", "b"}},
		{name: "unknown_subcommand_shows_the_commands", args: []string{"other"}, wantCode: 64, wantErr: `unknown command "other"`, wantOut: "Commands:\n  sub        A verb."},
		{name: "version_skips_validation", args: []string{"--version", "--name="}, wantOut: "tool"},
		{name: "help_exits_0", args: []string{"-h"}, wantOut: "Usage: tool [flags]\n       tool <command> [flags]\n\nDoes one thing."},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			var ran testOptions
			var sub []string
			err := testRoot(&ran, &sub).Execute(context.Background(), tt.args, &stdout, &stderr)
			if code := ExitCode("tool", err, &stderr); code != tt.wantCode {
				t.Errorf("exit code %d, want %d (err %v)", code, tt.wantCode, err)
			}
			if tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)) {
				t.Errorf("err = %v, want it to contain %q", err, tt.wantErr)
			}
			if tt.wantRun != nil && ran != *tt.wantRun {
				t.Errorf("ran with %+v, want %+v", ran, *tt.wantRun)
			}
			if tt.wantRun == nil && ran != (testOptions{}) {
				t.Errorf("ran with %+v, want no run", ran)
			}
			if strings.Join(sub, " ") != strings.Join(tt.wantSub, " ") {
				t.Errorf("subcommand got %q, want %q", sub, tt.wantSub)
			}
			if out := stdout.String() + stderr.String(); !strings.Contains(out, tt.wantOut) {
				t.Errorf("output %q, want it to contain %q", out, tt.wantOut)
			}
		})
	}
}

func TestValidateBindAddressAcceptsOnlyHostPortPortOrZero(t *testing.T) {
	for addr, want := range map[string]string{
		"0":              "",
		":8080":          "",
		"127.0.0.1:8080": "",
		"[::1]:0":        "",
		"8080":           `--x "8080": want host:port, :port or 0`,
		":http":          `--x ":http": port "http" is not a number from 0 to 65535`,
		":70000":         `--x ":70000": port "70000" is not a number from 0 to 65535`,
	} {
		err := ValidateBindAddress("--x", addr)
		if (err == nil) != (want == "") || err != nil && !strings.Contains(err.Error(), want) {
			t.Errorf("ValidateBindAddress(%q) = %v, want %q", addr, err, want)
		}
	}
}

package cmdlinetest

import (
	"strings"
	"testing"
)

// Outcome is what one command line of a binary did: whether it ran the
// binary's work, the exit code cmdline.ExitCode gave its error, and what
// it printed.
type Outcome struct {
	Ran    bool
	Code   int
	Stdout string
	Stderr string
}

// Check fails t unless got is the outcome want describes: the same Ran and
// Code, the same standard output where want names one, and a standard
// error that contains want's.
func (want Outcome) Check(t testing.TB, got Outcome) {
	t.Helper()
	if got.Code != want.Code {
		t.Errorf("exit code %d, want %d; stderr %q", got.Code, want.Code, got.Stderr)
	}
	if got.Ran != want.Ran {
		t.Errorf("ran = %v, want %v", got.Ran, want.Ran)
	}
	if want.Stdout != "" && got.Stdout != want.Stdout {
		t.Errorf("stdout = %q, want %q", got.Stdout, want.Stdout)
	}
	if !strings.Contains(got.Stderr, want.Stderr) {
		t.Errorf("stderr = %q, want it to contain %q", got.Stderr, want.Stderr)
	}
}

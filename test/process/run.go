package process

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
)

// A Command is a one-shot run of a program for a test: it starts, ends,
// and, when it fails, everything it printed goes into the error. It is the
// kit's one runner of such commands (test/README.md); Start is for
// long-running children.
type Command struct {
	// Dir is the working directory; the test's own when empty.
	Dir string
	// Env is added to the test's environment.
	Env []string
	// Stdin is the standard input; none when nil.
	Stdin []byte
}

// Result is what a finished command printed and how it ended.
type Result struct {
	Stdout, Stderr string
	// Code is the exit code; -1 when the command did not start or a
	// signal ended it.
	Code int
}

// String is the output of a run as a failure shows it.
func (r Result) String() string {
	return fmt.Sprintf("exit %d\nstdout:\n%s\nstderr:\n%s", r.Code, cmp.Or(r.Stdout, "(none)"), cmp.Or(r.Stderr, "(none)"))
}

// Run runs path with args until it ends or ctx does. The error, when the
// command did not start or did not exit 0, names the command line and
// carries its exit code and all it printed; the result is filled in
// either way, for a test that expects a command to fail.
func (c Command) Run(ctx context.Context, path string, args ...string) (Result, error) {
	cmd := exec.CommandContext(ctx, path, args...)
	cmd.Dir = c.Dir
	if len(c.Env) > 0 {
		cmd.Env = append(os.Environ(), c.Env...)
	}
	if c.Stdin != nil {
		cmd.Stdin = bytes.NewReader(c.Stdin)
	}
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	r := Result{Stdout: stdout.String(), Stderr: stderr.String(), Code: cmd.ProcessState.ExitCode()}
	if err == nil {
		return r, nil
	}
	var exit *exec.ExitError
	if !errors.As(err, &exit) {
		r.Code = -1
	}
	line := strings.Join(append([]string{path}, args...), " ")
	return r, fmt.Errorf("%s: %w\n%s", line, err, r)
}

// MustRun runs path with args on t's context and returns its standard
// output; a command that does not exit 0 fails t with all it printed.
func (c Command) MustRun(t testing.TB, path string, args ...string) string {
	t.Helper()
	r, err := c.Run(t.Context(), path, args...)
	if err != nil {
		t.Fatal(err)
	}
	return r.Stdout
}

// Run runs path with args as Command{}.MustRun does.
func Run(t testing.TB, path string, args ...string) string {
	t.Helper()
	return Command{}.MustRun(t, path, args...)
}

package process

import (
	"context"
	"fmt"
	"runtime"
	"strings"
	"testing"
)

func TestRunReturnsStdoutAndTakesStdinEnvAndDir(t *testing.T) {
	dir := t.TempDir()
	c := Command{Dir: dir, Env: []string{"RUN_TEST_WORD=word"}, Stdin: []byte("input")}
	r, err := c.Run(t.Context(), "/bin/sh", "-c", `printf '%s %s %s' "$(cat)" "$RUN_TEST_WORD" "$(pwd)"`)
	if err != nil {
		t.Fatal(err)
	}
	if want := "input word " + dir; r.Stdout != want || r.Code != 0 {
		t.Errorf("stdout %q, code %d, want %q, 0", r.Stdout, r.Code, want)
	}
}

func TestRunOfAFailedCommandNamesItAndCarriesAllItPrinted(t *testing.T) {
	r, err := Command{}.Run(t.Context(), "/bin/sh", "-c", "echo out; echo err >&2; exit 3")
	if err == nil {
		t.Fatal("a command that exits 3 returned no error")
	}
	for _, want := range []string{"/bin/sh -c echo out; echo err >&2; exit 3", "exit 3", "out", "err"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q lacks %q", err, want)
		}
	}
	if r.Code != 3 || r.Stdout != "out\n" || r.Stderr != "err\n" {
		t.Errorf("result %+v, want code 3, stdout out, stderr err", r)
	}
}

func TestRunOfAMissingProgramReportsCodeMinusOne(t *testing.T) {
	r, err := Command{}.Run(t.Context(), "/nonexistent/program")
	if err == nil || r.Code != -1 || !strings.Contains(err.Error(), "/nonexistent/program") {
		t.Errorf("result %+v, error %v, want code -1 and the program named", r, err)
	}
}

// fatalRecorder is a testing.TB that records a Fatal instead of failing
// the test that runs it.
type fatalRecorder struct {
	testing.TB
	ctx   context.Context
	fatal string
}

func (r *fatalRecorder) Helper()                  {}
func (r *fatalRecorder) Context() context.Context { return r.ctx }
func (r *fatalRecorder) Fatal(args ...any) {
	r.fatal = fmt.Sprint(args...)
	runtime.Goexit()
}

func TestMustRunFailsTheTestWithWhatRunReports(t *testing.T) {
	r := &fatalRecorder{ctx: t.Context()}
	var out string
	done := make(chan struct{})
	go func() {
		defer close(done)
		out = Run(r, "/bin/sh", "-c", "echo ok")
	}()
	<-done
	if r.fatal != "" || out != "ok\n" {
		t.Errorf("a command that exits 0: stdout %q, failure %q", out, r.fatal)
	}
	done = make(chan struct{})
	go func() {
		defer close(done)
		Run(r, "/bin/sh", "-c", "echo why >&2; exit 1")
	}()
	<-done
	if !strings.Contains(r.fatal, "why") || !strings.Contains(r.fatal, "exit 1") {
		t.Errorf("failure %q, want the command's stderr and exit code", r.fatal)
	}
}

package process

import (
	"strings"
	"testing"

	"github.com/kyma-project/kim-snatch/test/framework/fataltb"
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

func TestMustRunFailsTheTestWithWhatRunReports(t *testing.T) {
	r := fataltb.New(t.Context())
	var out string
	r.Run(func(tb testing.TB) { out = Run(tb, "/bin/sh", "-c", "echo ok") })
	if r.Failure != "" || out != "ok\n" {
		t.Errorf("a command that exits 0: stdout %q, failure %q", out, r.Failure)
	}
	r.Run(func(tb testing.TB) { Run(tb, "/bin/sh", "-c", "echo why >&2; exit 1") })
	if !strings.Contains(r.Failure, "why") || !strings.Contains(r.Failure, "exit 1") {
		t.Errorf("failure %q, want the command's stderr and exit code", r.Failure)
	}
}

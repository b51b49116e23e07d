package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/kyma-project/kim-snatch/pkg/check"
	"github.com/kyma-project/kim-snatch/test/e2e/stack"
	"github.com/kyma-project/kim-snatch/test/framework/poll"
	"github.com/kyma-project/kim-snatch/test/process"
)

// checker runs `cabundle-syncer check`, built as the image builds it.
type checker struct{ bin string }

func newChecker(t *testing.T) checker {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Minute)
	defer cancel()
	bin, err := process.Build(ctx, stack.SyncerName, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return checker{bin: bin}
}

// checkRun is one run of the command.
type checkRun struct {
	args           []string
	code           int
	stdout, stderr string
	took           time.Duration
}

func (r checkRun) String() string {
	return fmt.Sprintf("cabundle-syncer check %s: exit code %d (%s)\nstdout:\n%s\nstderr:\n%s",
		strings.Join(r.args, " "), r.code, r.took.Round(time.Millisecond), r.stdout, r.stderr)
}

// run runs `cabundle-syncer check args...` with env added to an
// environment that names no cluster of its own.
func (c checker) run(t *testing.T, env []string, args ...string) checkRun {
	t.Helper()
	run, err := runWithoutCluster(c.bin, append([]string{"check"}, args...), env)
	if err != nil {
		t.Fatalf("run %s: %v", c.bin, err)
	}
	run.args = args
	return run
}

// runWithoutCluster runs bin with args, with a timeout of a minute, in an
// environment that names no cluster of its own: KUBECONFIG,
// KUBERNETES_SERVICE_* and the variables named in unset are removed, and
// env is added. An exit code other than 0 is no error: it is the run's
// code.
func runWithoutCluster(bin string, args, env []string, unset ...string) (checkRun, error) {
	return runWithoutClusterFor(time.Minute, bin, args, env, unset...)
}

// runWithoutClusterFor is runWithoutCluster with the timeout given.
func runWithoutClusterFor(timeout time.Duration, bin string, args, env []string, unset ...string) (checkRun, error) {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Env = slices.DeleteFunc(os.Environ(), func(kv string) bool {
		return strings.HasPrefix(kv, "KUBECONFIG=") || strings.HasPrefix(kv, "KUBERNETES_SERVICE_") ||
			slices.ContainsFunc(unset, func(name string) bool { return strings.HasPrefix(kv, name+"=") })
	})
	cmd.Env = append(cmd.Env, env...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	start := time.Now()
	err := cmd.Run()
	run := checkRun{args: args, stdout: stdout.String(), stderr: stderr.String(), took: time.Since(start)}
	var exitErr *exec.ExitError
	if err != nil && !errors.As(err, &exitErr) {
		return run, err
	}
	run.code = cmd.ProcessState.ExitCode()
	return run, nil
}

// report runs the command with args that include -o json and decodes the
// report.
func (c checker) report(t *testing.T, env []string, args ...string) (checkRun, check.Report) {
	t.Helper()
	run := c.run(t, env, args...)
	r, err := decodeReport(run.stdout, slices.Contains(args, "--target-namespace"))
	if err != nil {
		t.Fatalf("%v\n%s", err, run)
	}
	return run, r
}

// reportPoll is how often waitReport runs the check: its callers report
// how soon the report showed what they waited for.
var reportPoll = poll.Interval(250 * time.Millisecond)

// waitReport runs the JSON form every reportPoll until done accepts the
// report, and returns the last run and report and whether done did.
func (c checker) waitReport(t *testing.T, env []string, timeout time.Duration, args []string, done func(check.Report) bool) (checkRun, check.Report, bool) {
	t.Helper()
	var run checkRun
	var r check.Report
	err := poll.Until(t.Context(), "a report the test accepts", func(context.Context) error {
		if run, r = c.report(t, env, args...); !done(r) {
			return fmt.Errorf("report %s, items %s", r.Status, itemStatuses(r))
		}
		return nil
	}, poll.Timeout(timeout), reportPoll)
	return run, r, err == nil
}

// itemStatuses lists each item of r with its status.
func itemStatuses(r check.Report) string {
	s := make([]string, 0, len(r.Checks))
	for _, res := range r.Checks {
		s = append(s, res.ID+" "+string(res.Status))
	}
	return strings.Join(s, ", ")
}

// decodeReport parses the JSON report strictly and checks that it holds
// the items in their fixed order.
func decodeReport(stdout string, withNamespace bool) (check.Report, error) {
	dec := json.NewDecoder(strings.NewReader(stdout))
	dec.DisallowUnknownFields()
	var r check.Report
	if err := dec.Decode(&r); err != nil {
		return r, fmt.Errorf("stdout is not the JSON report: %w", err)
	}
	want := checkIDs(withNamespace)
	got := make([]string, 0, len(r.Checks))
	for _, c := range r.Checks {
		got = append(got, c.ID)
	}
	if !slices.Equal(got, want) {
		return r, fmt.Errorf("report items %v, want %v", got, want)
	}
	return r, nil
}

// result returns the item id of r.
func result(r check.Report, id string) check.Result {
	for _, c := range r.Checks {
		if c.ID == id {
			return c
		}
	}
	return check.Result{ID: id}
}

// statusesAre reports whether every item of r has the status want gives
// it on this system.
func statusesAre(r check.Report, want map[string]check.Status) bool {
	want = withSystem(want)
	for _, res := range r.Checks {
		if res.Status != wantStatus(want, res.ID) {
			return false
		}
	}
	return true
}

// wantStatus is the status want gives item id: PASS unless named.
func wantStatus(want map[string]check.Status, id string) check.Status {
	if st, ok := want[id]; ok {
		return st
	}
	return check.StatusPass
}

// withSystem adds to want what the system shows by its nature: from
// outside a kind cluster the Pods' addresses cannot be dialled, so
// served-certificate warns there unless want says otherwise. The real
// node's Pods can be dialled.
func withSystem(want map[string]check.Status) map[string]check.Status {
	if _, ok := sys.(*nodeSystem); ok {
		return want
	}
	out := map[string]check.Status{check.IDServedCertificate: check.StatusWarn}
	maps.Copy(out, want)
	return out
}

// overall is the report status and exit code that want's statuses make,
// as the operators' contract has it: any FAIL fails with 2, else any SKIP
// is INCOMPLETE with 4, else any WARN warns with 1, else it passes with 0.
func overall(want map[string]check.Status) (check.Status, int) {
	statuses := slices.Collect(maps.Values(want))
	switch {
	case slices.Contains(statuses, check.StatusFail):
		return check.StatusFail, 2
	case slices.Contains(statuses, check.StatusSkip):
		return check.StatusIncomplete, 4
	case slices.Contains(statuses, check.StatusWarn):
		return check.StatusWarn, 1
	default:
		return check.StatusPass, 0
	}
}

// assertReport holds every item of r to want (PASS where want names none):
// the status, a remediation exactly where it did not pass, and the overall
// status and exit code that follow. Nothing goes to stderr.
func assertReport(t *testing.T, run checkRun, r check.Report, want map[string]check.Status) {
	t.Helper()
	want = withSystem(want)
	status, code := overall(want)
	ok := true
	for _, res := range r.Checks {
		st := wantStatus(want, res.ID)
		if res.Status != st {
			t.Errorf("%s = %s %q, want %s", res.ID, res.Status, res.Message, st)
			ok = false
		}
		if res.Message == "" {
			t.Errorf("%s has no message", res.ID)
		}
		if pass := res.Status == check.StatusPass; pass != (res.Remediation == "") {
			t.Errorf("%s %s with remediation %q: want one exactly when it did not pass", res.ID, res.Status, res.Remediation)
		}
	}
	if r.Status != status || run.code != code {
		t.Errorf("report status %s, exit code %d; want %s, %d", r.Status, run.code, status, code)
		ok = false
	}
	if run.stderr != "" {
		t.Errorf("stderr = %q, want nothing: the report is the output", run.stderr)
	}
	if !ok {
		t.Logf("report:\n%s", run.stdout)
	}
}

// assertTable holds the table form to want: each item's status, the arrow
// line with the remediation under each that did not pass, the closing
// status and the exit code.
func assertTable(t *testing.T, run checkRun, want map[string]check.Status) {
	t.Helper()
	want = withSystem(want)
	status, code := overall(want)
	if run.code != code || run.stderr != "" {
		t.Errorf("table: exit code %d, stderr %q; want %d and nothing", run.code, run.stderr, code)
	}
	lines := strings.Split(run.stdout, "\n")
	for _, id := range checkIDs(false) {
		st := wantStatus(want, id)
		if got := tableStatus(run.stdout, id); got != string(st) {
			t.Errorf("table: %s is %q, want %s", id, got, st)
		}
		i := slices.IndexFunc(lines, func(l string) bool { return strings.HasPrefix(l, id+" ") })
		arrow := i >= 0 && i+1 < len(lines) && strings.HasPrefix(strings.TrimSpace(lines[i+1]), "→ ") && len(strings.TrimSpace(lines[i+1])) > len("→ ")
		if arrow != (st != check.StatusPass) {
			t.Errorf("table: %s %s with a remediation line: %v, want %v", id, st, arrow, st != check.StatusPass)
		}
	}
	if !strings.HasSuffix(run.stdout, "\nStatus: "+string(status)+"\n") {
		t.Errorf("table: want it to end with Status: %s:\n%s", status, run.stdout)
	}
}

// tableStatus returns the STATUS column of item id in the table, or "".
func tableStatus(table, id string) string {
	for _, l := range strings.Split(table, "\n") {
		if f := strings.Fields(l); len(f) >= 2 && f[0] == id {
			return f[1]
		}
	}
	return ""
}

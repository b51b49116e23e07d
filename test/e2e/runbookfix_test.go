package e2e

import (
	"context"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	promv1 "github.com/prometheus/client_golang/api/prometheus/v1"

	"github.com/kyma-project/kim-snatch/test/e2e/stack"
	"github.com/kyma-project/kim-snatch/test/framework"
	"github.com/kyma-project/kim-snatch/test/framework/poll"
	"github.com/kyma-project/kim-snatch/test/runbook"
	"github.com/kyma-project/kim-snatch/test/tools"
)

// Runbooks proven (docs/operations.md, "Alerts"): where a break of
// TestCheckFailsExactlyTheBrokenItem raises an alert whose runbook repairs
// it, the runbook repairs it, as written and read from the document. Its
// Confirm block shows what the runbook says confirms the alert; its Fix
// block runs cleanly; then the alert resolves in every profile it fired
// in, no alert the break does not raise fires, and the check passes. The
// break's own repair is not called then. The table at the end gives, per
// alert, the time to fire and the time from the Fix to the resolution.

// runbookFix names the alert whose runbook repairs a break.
type runbookFix struct {
	alert string
	// confirmed holds for the output of the Confirm block while the cause
	// is there, as the runbook's "Confirmed when" says; when says so.
	confirmed func(out string) bool
	when      string
	// before, when set, ends what only kept the break in place and is no
	// cause the runbook repairs (a neighbour the break paused), between
	// the Confirm block and the Fix block.
	before func(context.Context) error
	// during are alerts the Fix itself may raise, beside the break's.
	during []string
	// windowed, when set, says why the scenario does not wait for the
	// alert to resolve: it counts over a window of minutes, which must
	// pass first.
	windowed string
	// placeholders are the values of the runbook's placeholders other
	// than the overlay's, as the operator reads them from the Confirm
	// block's output (the Pod the check names).
	placeholders map[string]string
	// editor, when set, is what the operator does in the editor that a
	// `kubectl edit` of the Fix opens, as a command that edits the file
	// it is given (KUBE_EDITOR).
	editor string
	// renews says that the Fix renews the Certificate: the scenario ends
	// only once every replica serves the new CA, so that the rotation it
	// starts, and the failed loads of a bad pair before it, do not reach
	// into the next break.
	renews bool
}

// shows is a runbookFix.confirmed that holds when the output matches re.
func shows(re string) func(string) bool {
	return regexp.MustCompile(re).MatchString
}

// twoTemplatesNewNotReady is a runbookFix.confirmed for the output of
// `kubectl get pods -L pod-template-hash`: Pods of two templates are
// listed, those of one all ready and those of the other none. The columns
// between READY and the hash, the last, may hold spaces ("3 (5s ago)").
func twoTemplatesNewNotReady(out string) bool {
	ready := map[string][2]int{} // by hash: Pods ready, Pods not
	for _, line := range strings.Split(strings.TrimSpace(out), "\n")[1:] {
		f := strings.Fields(line)
		if len(f) < 3 {
			continue
		}
		n, of, _ := strings.Cut(f[1], "/")
		counts := ready[f[len(f)-1]]
		if n == of {
			counts[0]++
		} else {
			counts[1]++
		}
		ready[f[len(f)-1]] = counts
	}
	var serving, stuck int
	for _, c := range ready {
		switch {
		case c[1] == 0:
			serving++
		case c[0] == 0:
			stuck++
		}
	}
	return len(ready) == 2 && serving == 1 && stuck == 1
}

// sha256Digest is a digest as `openssl sha256` prints it, at the end of
// its line.
var sha256Digest = regexp.MustCompile(`(?m)= ([0-9a-f]{64})$`)

// twoHashesDiffer is a runbookFix.confirmed for the output of two
// `openssl sha256` runs: two digests, not the same.
func twoHashesDiffer(out string) bool {
	digests := sha256Digest.FindAllStringSubmatch(out, -1)
	return len(digests) == 2 && digests[0][1] != digests[1][1]
}

// prometheusUnlabelled is a runbookFix.confirmed for the output of
// `kubectl get pods -l app.kubernetes.io/name=prometheus -L
// networking.kyma-project.io/metrics-scraping`: Prometheus Pods are listed,
// and none carries the label's value allowed, which the base policies
// admit.
func prometheusUnlabelled(out string) bool {
	return strings.Contains(out, "prometheus-") && !strings.Contains(out, "allowed")
}

// ksmArgs is a line of the first Confirm block of
// KimSnatchKubeStateMetricsLabelsAbsent: a kube-state-metrics Pod and its
// container's arguments.
var ksmArgs = regexp.MustCompile(`(?m)^\S+ kube-state-metrics-\S+: (\[.*)$`)

// allowlistLacksPool is a runbookFix.confirmed for that block's output: a
// kube-state-metrics Pod whose arguments name no Node pool label.
func allowlistLacksPool(out string) bool {
	for _, m := range ksmArgs.FindAllStringSubmatch(out, -1) {
		if !strings.Contains(m[1], "worker.gardener.cloud/pool") {
			return true
		}
	}
	return false
}

// openSSLNotAfter is the date `openssl x509 -enddate` prints.
var openSSLNotAfter = regexp.MustCompile(`notAfter=(.+ GMT)`)

// notAfterWithin is a runbookFix.confirmed for the output of `openssl x509
// -noout -enddate`: the certificate expires less than d from now.
func notAfterWithin(d time.Duration) func(string) bool {
	return func(out string) bool {
		m := openSSLNotAfter.FindStringSubmatch(out)
		if m == nil {
			return false
		}
		notAfter, err := time.Parse("Jan _2 15:04:05 2006 MST", m[1])
		return err == nil && time.Until(notAfter) < d
	}
}

// servedNotAfter is a replica's notAfter as served-certificate lists it.
var servedNotAfter = regexp.MustCompile(`notAfter (\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ)`)

// servedNotAfterWithin is a runbookFix.confirmed for the output of
// `kubectl kim-snatch check -v`: served-certificate lists a replica whose
// certificate expires less than d from now.
func servedNotAfterWithin(d time.Duration) func(string) bool {
	return func(out string) bool {
		for _, m := range servedNotAfter.FindAllStringSubmatch(out, -1) {
			if notAfter, err := time.Parse(time.RFC3339, m[1]); err == nil && time.Until(notAfter) < d {
				return true
			}
		}
		return false
	}
}

// rotationAlerts are the alerts a Fix that renews the certificate may
// raise: the kubelet projects the new Secret to each replica at its own
// time, and until the last has loaded it they serve different
// certificates, for longer than the suite's `for` of 20s.
var rotationAlerts = []string{alertDifferentCertificates}

// mwcRecreatedAlerts are the alerts a Fix that applies a deleted MWC again
// may raise: it comes back without a caBundle, and a Pod created before
// the syncer has written one fails open.
var mwcRecreatedAlerts = []string{alertFailingOpen}

// fixRow is one line of the table of runbook Fixes.
type fixRow struct {
	alert, brk, fix string
	// fired is from the break to the alert firing, resolved from the start
	// of the Fix to the alert resolving in every profile it fired in.
	fired, resolved time.Duration
	note            string
}

// overlayPlaceholder is what the runbooks write for the overlay the
// installation was applied with; the suite's is test/e2e/overlay.
const overlayPlaceholder = "<your-overlay>"

// anyPlaceholder is any placeholder: a block that still holds one once
// the shell has filled its own cannot be run as written.
var anyPlaceholder = regexp.MustCompile(`<[a-z][a-z-]*>`)

// runbookShell runs runbook blocks as an operator would: bash, with
// kubectl and the check's plugin on PATH, KUBECONFIG naming the cluster.
type runbookShell struct {
	env []string
	doc string // docs/operations.md
	// fill holds the value of each placeholder the shell fills: the
	// suite's overlay for overlayPlaceholder, and a break's own.
	fill map[string]string
}

func newRunbookShell(t *testing.T, c checker) runbookShell {
	t.Helper()
	kubectl, err := framework.Kubectl()
	if err != nil {
		t.Fatal(err)
	}
	path := strings.Join([]string{installPlugin(t, c), filepath.Dir(kubectl), os.Getenv("PATH")}, string(os.PathListSeparator))
	return runbookShell{
		env:  []string{"PATH=" + path, "KUBECONFIG=" + sys.KubeconfigPath()},
		doc:  string(repoFile(t, "docs/operations.md")),
		fill: map[string]string{overlayPlaceholder: filepath.Join(tools.MustRepoRoot(t), "test", "e2e", "overlay")},
	}
}

// runbook reads alert's runbook from docs/operations.md.
func (s runbookShell) runbook(t *testing.T, alert string) runbook.Runbook {
	t.Helper()
	section, err := runbook.Section(s.doc, alert)
	if err != nil {
		t.Fatalf("docs/operations.md: %v", err)
	}
	rb, err := runbook.Parse(section)
	if err != nil {
		t.Fatalf("docs/operations.md, section %s: %v", alert, err)
	}
	return rb
}

// run runs script with its placeholders filled in; strict stops it at the
// first command that fails.
func (s runbookShell) run(t *testing.T, script string, strict bool) checkRun {
	t.Helper()
	for placeholder, value := range s.fill {
		script = strings.ReplaceAll(script, placeholder, value)
	}
	if p := anyPlaceholder.FindString(script); p != "" {
		t.Fatalf("the block holds the placeholder %s, which the suite cannot fill:\n%s", p, script)
	}
	args := []string{"-o", "pipefail", "-c", script}
	if strict {
		args = append([]string{"-e"}, args...)
	}
	run, err := runWithoutClusterFor(10*time.Minute, "bash", args, s.env, "PATH")
	if err != nil {
		t.Fatalf("bash: %v", err)
	}
	return run
}

// repairByRunbook confirms the break's alert and repairs the break with
// its runbook, and asserts what the runbook promises: the alert resolves,
// nothing else fires, the check passes. disarm drops the break's own
// repair once the Fix has run.
func (tt checkBreak) repairByRunbook(t *testing.T, c checker, watch *alertWatch, args []string, alerts map[string][]string, broken time.Time, disarm func()) {
	shell := newRunbookShell(t, c)
	maps.Copy(shell.fill, tt.fix.placeholders)
	if tt.fix.editor != "" {
		shell.env = append(shell.env, "KUBE_EDITOR="+tt.fix.editor)
	}
	rb := shell.runbook(t, tt.fix.alert)
	confirm := shell.run(t, rb.Confirm.Script, false)
	logf("runbook of %s, Confirm, for %s:\n%s", tt.fix.alert, tt.name, confirm)
	if !tt.fix.confirmed(confirm.stdout + confirm.stderr) {
		t.Errorf("%s: the Confirm block of %s does not confirm it: want %s:\n%s", tt.name, tt.fix.alert, tt.fix.when, confirm)
	}
	if tt.fix.before != nil {
		if err := tt.fix.before(t.Context()); err != nil {
			t.Fatalf("%s: before the Fix: %v", tt.name, err)
		}
	}
	var renewedFrom string
	if tt.fix.renews {
		renewedFrom = stack.CurrentFingerprint(t.Context(), sys.Clientset())
	}
	start := time.Now()
	fix := shell.run(t, rb.Fix.Script, true)
	logf("runbook of %s, Fix, for %s (exit %d, %s):\n%s", tt.fix.alert, tt.name, fix.code, fix.took.Round(time.Second), fix)
	if fix.code != 0 {
		t.Fatalf("%s: the Fix block of %s failed:\n%s", tt.name, tt.fix.alert, fix)
	}
	disarm()
	row := fixRow{alert: tt.fix.alert, brk: tt.name, fix: strings.Join(rb.Fix.Commands, "; "), fired: watch.firedAfter(tt.name, tt.fix.alert), note: tt.fix.windowed}
	p := newAlertProgress(t, tt.name, broken, alerts, slices.Concat(tt.maybe, tt.fix.during), panelChange{})
	if tt.fix.windowed == "" {
		row.resolved = watch.awaitResolved(t, tt.fix.alert, alerts, p, start)
	}
	assertCheckPasses(t, c, args, tt.name, start)
	if tt.fix.renews {
		awaitRenewal(t, renewedFrom)
	}
	if err := p.seeAlerts(t.Context(), watch); err != nil {
		t.Errorf("%s: after the Fix of %s: %v", tt.name, tt.fix.alert, err)
	} else if len(p.others) > 0 {
		t.Errorf("%s: after the Fix of %s, alerts fired that the break does not raise: %v", tt.name, tt.fix.alert, p.others)
	}
	watch.fixes = append(watch.fixes, row)
}

// awaitRenewal waits until the Secret holds a CA other than before, and
// every webhook replica serves it.
func awaitRenewal(t *testing.T, before string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Minute)
	defer cancel()
	var fp string
	err := poll.Until(ctx, "the Fix's renewal to write a new CA", func(ctx context.Context) error {
		if fp = stack.CurrentFingerprint(ctx, sys.Clientset()); fp == "" || fp == before {
			return fmt.Errorf("the Secret's CA is %q, as before the Fix", fp)
		}
		return nil
	})
	if err == nil {
		err = sys.WaitServed(ctx, fp)
	}
	if err != nil {
		t.Fatal(err)
	}
}

// firedAfter is the time from the break of scenario to alert firing, in
// the profile where it fired first.
func (w *alertWatch) firedAfter(scenario, alert string) time.Duration {
	var first time.Duration
	for _, r := range w.rows {
		if r.scenario == scenario && r.alert == alert && r.firing > 0 && (first == 0 || r.firing < first) {
			first = r.firing
		}
	}
	return first
}

// awaitResolved waits until alert is active in no profile of want that
// names it, while p notes every other alert that fires, and returns the
// time since start. Meanwhile a Kyma Pod is created by dry run every 2 s,
// as in await.
func (w *alertWatch) awaitResolved(t *testing.T, alert string, want map[string][]string, p *alertProgress, start time.Time) time.Duration {
	t.Helper()
	err := poll.Until(t.Context(), alert+" to resolve after its runbook's Fix", func(ctx context.Context) error {
		w.createTrafficPod(ctx, t)
		_ = p.seeAlerts(ctx, w) // a Prometheus that does not answer shows below too
		var still []string
		for profile, names := range want {
			if !slices.Contains(names, alert) {
				continue
			}
			if active, err := alertActive(ctx, w.proms[profile], alert); err != nil {
				still = append(still, profileTitles[profile]+": "+err.Error())
			} else if active {
				still = append(still, profileTitles[profile])
			}
		}
		if len(still) > 0 {
			return fmt.Errorf("still active in the profiles %v", still)
		}
		return nil
	}, poll.Timeout(5*time.Minute), trafficPace)
	if err != nil {
		t.Error(err)
	}
	return time.Since(start)
}

// alertActive reports whether alert is pending or firing in prom.
func alertActive(ctx context.Context, prom promv1.API, alert string) (bool, error) {
	alerts, err := activeAlerts(ctx, prom)
	if err != nil {
		return false, err
	}
	for _, a := range alerts {
		if alertName(a) == alert {
			return true, nil
		}
	}
	return false, nil
}

// fixTable logs the runbook Fixes the breaks proved.
func (w *alertWatch) fixTable() {
	if len(w.fixes) == 0 {
		return
	}
	var b strings.Builder
	b.WriteString("| alert | break | time to fire | Fix | time to resolve |\n|---|---|---|---|---|\n")
	for _, r := range w.fixes {
		resolved := r.resolved.Round(time.Second).String()
		if r.note != "" {
			resolved = "not awaited: " + r.note
		}
		fmt.Fprintf(&b, "| %s | %s | %s | `%s` | %s |\n", r.alert, r.brk, r.fired.Round(time.Second), r.fix, resolved)
	}
	logf("runbook Fixes, run as docs/operations.md writes them:\n%s", b.String())
}

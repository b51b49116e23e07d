package e2e

import (
	"context"
	"maps"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kyma-project/kim-snatch/pkg/check"
	"github.com/kyma-project/kim-snatch/test/e2e/stack"
)

// A checkBreak of TestCheckFailsExactlyTheBrokenItem, and how it is
// proven: the break, the check's report held to it, its alerts awaited,
// and its repair, by the break's own restore or by its alert's runbook
// (runbookfix_test.go).

// settle returns want with each unsettled item's status taken from r,
// where it is PASS or FAIL.
func settle(want map[string]check.Status, r check.Report, unsettled []string) map[string]check.Status {
	out := maps.Clone(want)
	for _, id := range unsettled {
		if st := result(r, id).Status; st == check.StatusPass || st == check.StatusFail {
			out[id] = st
		}
	}
	return out
}

// syncerStopper stops every syncer replica; the local stack can.
type syncerStopper interface {
	StopSyncers(ctx context.Context) error
}

// onceCleanup returns restore made safe to call twice, and calls it when
// t ends if the test did not, so that a failed step never leaves the
// shared installation broken for the next test. disarm drops restore, once
// something else has repaired the installation.
func onceCleanup(t *testing.T, restore func(context.Context) error) (do func(context.Context) error, disarm func()) {
	var once sync.Once
	var err error
	do = func(ctx context.Context) error {
		once.Do(func() { err = restore(ctx) })
		return err
	}
	disarm = func() { once.Do(func() {}) }
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		if err := do(ctx); err != nil {
			t.Errorf("restore: %v", err)
		}
	})
	return do, disarm
}

// A checkBreak is one item of the checklist broken on its own, and what
// the check and the alerts must then show.
type checkBreak struct {
	name string
	// smoke puts the break in the smoke tier; the others are in the full.
	smoke bool
	// item is the item that must fail (or have status, when set),
	// with message in its message.
	item, message string
	status        check.Status
	// others are the items that are not PASS by design, and their
	// status; unsettled items may PASS or FAIL from run to run.
	others    map[string]check.Status
	unsettled []string
	// breakIt breaks the installation and returns what repairs it.
	breakIt func(t *testing.T) (restore func(context.Context) error)
	// hold is how long the fault must last before the check runs
	// once more and reports the same.
	hold time.Duration
	// alerts and shoot are the alerts that fire in the API server
	// scraped and the Shoot profile, and no other. exercise, when set,
	// makes the fault show in the metrics, as traffic would, once the
	// check has seen it; it returns what undoes its side effects.
	// adjust, when set, drops from both what the break did not cause.
	// maybe are alerts that may fire too, in either profile, and are
	// not required.
	alerts, shoot, maybe []string
	exercise             func(t *testing.T) (undo func())
	adjust               func(alerts []string) []string
	// fix, where the suite watches the alerts, is the alert whose
	// runbook repairs the break instead of breakIt's repair.
	fix *runbookFix
	// again are the break's variants (runs).
	again []variant
}

// prove breaks the installation, holds the check's report to the break,
// awaits the break's alerts where they are watched, and repairs it.
func (tt checkBreak) prove(t *testing.T, c checker, watch *alertWatch, args []string) {
	want := tt.want()
	alerts := map[string][]string{stack.ProfileAPIServer: tt.alerts, stack.ProfileShoot: tt.shoot}
	if watch != nil {
		watch.quiet(t, alerts)
	}
	broken := time.Now()
	restore, disarm := onceCleanup(t, tt.breakIt(t))
	tt.assertReported(t, c, args, want, broken)
	if watch == nil {
		tt.assertRepaired(t, c, args, restore)
		return
	}
	tt.awaitAlerts(t, watch, broken, alerts)
	if tt.fix != nil {
		tt.repairByRunbook(t, c, watch, args, alerts, broken, disarm)
		return
	}
	tt.assertRepaired(t, c, args, restore)
}

// A variant is one more run of a break that fires two alerts, each with
// its own Fix, so that each one's runbook is proven: named
// <name>_fixed_by_<runbook>, repaired by fix, and where the kube-apiserver
// is scraped awaiting alerts instead of the break's, when set.
type variant struct {
	runbook string
	alerts  []string
	fix     *runbookFix
}

// runs returns the breaks to run: each, followed by its variants.
func runs(breaks []checkBreak) []checkBreak {
	var out []checkBreak
	for _, tt := range breaks {
		out = append(out, tt)
		for _, v := range tt.again {
			run := tt
			run.name, run.fix, run.again = tt.name+"_fixed_by_"+v.runbook, v.fix, nil
			if v.alerts != nil {
				run.alerts = v.alerts
			}
			out = append(out, run)
		}
	}
	return out
}

// subtest names the break and its outcome, the item it fails, warns or
// passes on: secret_deleted_fails_ca-secret. The break's own name keys its
// panel in breakPanels and its lines in the logs and tables.
func (tt checkBreak) subtest() string {
	verb := map[check.Status]string{check.StatusFail: "fails", check.StatusWarn: "warns", check.StatusPass: "passes"}[tt.itemStatus()]
	return tt.name + "_" + verb + "_" + tt.item
}

// itemStatus is the status the broken item must have: FAIL unless set.
func (tt checkBreak) itemStatus() check.Status {
	if tt.status == "" {
		return check.StatusFail
	}
	return tt.status
}

// want is the status of each item that is not PASS by the break.
func (tt checkBreak) want() map[string]check.Status {
	want := map[string]check.Status{tt.item: tt.itemStatus()}
	for id, st := range tt.others {
		want[id] = st
	}
	return want
}

// assertReported waits until the check reports the break, in JSON, holds
// the table to it, and holds the report once more after tt.hold.
func (tt checkBreak) assertReported(t *testing.T, c checker, args []string, want map[string]check.Status, broken time.Time) {
	status := tt.itemStatus()
	// Pods of stopped replicas go away and the Lease is released
	// a moment after the processes end, and restarted replicas
	// take a moment to show again: wait for the report to settle
	// on exactly the expected statuses, then hold it to the rest
	// of the expectation.
	run, r, ok := c.waitReport(t, nil, time.Minute, args, func(r check.Report) bool {
		return strings.Contains(result(r, tt.item).Message, tt.message) && statusesAre(r, settle(want, r, tt.unsettled))
	})
	if !ok {
		t.Fatalf("the report did not settle on %s %s with %q and %v within 1m; last run: %s", tt.item, status, tt.message, tt.others, run)
	}
	detected := time.Since(broken)
	assertReport(t, run, r, settle(want, r, tt.unsettled))

	table := c.run(t, nil, "--kubeconfig", sys.KubeconfigPath())
	logf("check, %s (%s reported %s after the break was in place, run took %s):\n%s",
		tt.name, status, detected.Round(time.Millisecond), table.took.Round(time.Millisecond), table.stdout)
	if len(tt.unsettled) == 0 {
		assertTable(t, table, want)
	}
	time.Sleep(tt.hold)
	run, r = c.report(t, nil, args...)
	assertReport(t, run, r, settle(want, r, tt.unsettled))
}

// awaitAlerts exercises the break where it says how, and awaits its
// alerts and its dashboard panel.
func (tt checkBreak) awaitAlerts(t *testing.T, watch *alertWatch, broken time.Time, alerts map[string][]string) {
	undo := func() {}
	if tt.exercise != nil {
		undo = tt.exercise(t)
	}
	if tt.adjust != nil {
		for profile := range alerts {
			alerts[profile] = tt.adjust(alerts[profile])
		}
	}
	change, ok := breakPanels[tt.name]
	if !ok {
		t.Fatalf("no panel in breakPanels shows the break %s", tt.name)
	}
	watch.await(t, tt.name, broken, alerts, tt.maybe, change)
	undo()
}

// assertRepaired repairs the break and waits until the check passes again.
func (tt checkBreak) assertRepaired(t *testing.T, c checker, args []string, restore func(context.Context) error) {
	start := time.Now()
	if err := restore(context.Background()); err != nil {
		t.Fatalf("restore: %v", err)
	}
	assertCheckPasses(t, c, args, tt.name, start)
}

// assertCheckPasses waits until the check passes again after the repair
// of the break name that started at start.
func assertCheckPasses(t *testing.T, c checker, args []string, name string, start time.Time) {
	t.Helper()
	run, r, ok := c.waitReport(t, nil, 2*time.Minute, args, func(r check.Report) bool { return r.Status == check.StatusPass })
	if !ok {
		t.Fatalf("the check does not pass within 2m of the repair; last run: %s", run)
	}
	assertReport(t, run, r, nil)
	logf("check, %s: PASS again %s after the repair started", name, time.Since(start).Round(time.Millisecond))
}

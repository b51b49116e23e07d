package migration

import (
	"slices"
	"testing"
	"time"

	"github.com/kyma-project/kim-snatch/test/e2e/klm"
	"github.com/kyma-project/kim-snatch/test/framework"
)

// The module versions of the fleet path (docs/migration.md, "Through
// lifecycle-manager"): kim-snatch's last release, the five bridge versions
// and the module, then a module that changes only the webhook's release
// and one that changes only the syncer's.
const (
	oldModule     = "1.0.16"
	module        = "2.0.0"
	webhookUpdate = "2.0.1"
	syncerUpdate  = "2.0.2"
)

// bridges are the bridge versions, in the order the fleet takes them.
var bridges = []string{module + "-bridge-1", module + "-bridge-2", module + "-bridge-3", module + "-bridge-4",
	module + "-bridge-5"}

// monitoredFrom is the index in bridges of the version with which the
// operator applies monitoring.yaml, bridge-3 (docs/migration.md,
// "Monitoring during the path"), and before whose predecessor the
// operator deletes it on the way back.
const monitoredFrom = 2

// The fleet path from kim-snatch to KIM Snatch and back, driven only
// through the stand-in of lifecycle-manager (test/e2e/klm), as Kyma's
// fleet takes it: a ModuleReleaseMeta pins the mandatory module kim-snatch,
// and each step sets its version, on a real node while Pods are created at
// 20/s. Between two steps it waits for what docs/migration.md tells the
// operator to wait for: the Manifest Ready at the new version, and every
// webhook Pod serving the Secret's certificate, which each entry's
// caBundle verifies. Four scenarios, one after another on one runtime:
//   - there: 1.0.16, through every bridge version, to the module;
//   - upgrades: the webhook's release alone, then the syncer's;
//   - skip: a Manifest labelled skip-reconciliation stays as it was through
//     a version change, and converges once the label is gone;
//   - back: the module, through the bridge versions in reverse, to 1.0.16.
//
// Every Pod gets exactly one term, no create fails, the API server's
// fail-open count does not rise, `check` passes at the module, at each
// end only one installation is left, and after each scenario the alerts
// of both monitoring profiles are quiet (fleet_alerts_test.go).
func TestFleetPathThroughLifecycleManagerMissesNoPod(t *testing.T) {
	framework.InTier(t, framework.Full, "the fleet path through lifecycle-manager's stand-in")
	framework.Alone(t, "it installs, upgrades and rolls back the module on its own cluster")
	ctx, e, _ := startScenario(t, 100*time.Minute, true)
	f := e.startFleet(ctx, t)
	f.install(ctx, t, oldModule)
	e.waitServed(ctx, t)
	l := e.startLoad(ctx, t)

	for _, v := range bridges[:monitoredFrom] {
		f.step(ctx, t, l, "there", v)
	}
	f.startMonitoring(ctx, t, module)
	for _, v := range append(slices.Clone(bridges[monitoredFrom:]), module) {
		f.step(ctx, t, l, "there", v)
	}
	f.checkModule(ctx, t, module)
	f.alerts.settle(ctx, t, e, "there", true)
	f.step(ctx, t, l, "upgrades", webhookUpdate)
	f.checkRolled(ctx, t, webhookUpdate, "snatch-webhook")
	f.step(ctx, t, l, "upgrades", syncerUpdate)
	f.checkRolled(ctx, t, syncerUpdate, "cabundle-syncer")
	f.checkModule(ctx, t, syncerUpdate)
	f.alerts.settle(ctx, t, e, "upgrades", true)
	f.skip(ctx, t, l, module)
	f.checkModule(ctx, t, module)
	f.alerts.settle(ctx, t, e, "skip", true)
	for i := len(bridges) - 1; i >= 0; i-- {
		if i == monitoredFrom-1 {
			f.stopMonitoring(ctx, t)
			f.alerts.settle(ctx, t, e, "back", false)
		}
		f.step(ctx, t, l, "back", bridges[i])
	}
	f.step(ctx, t, l, "back", oldModule)
	f.checkOld(ctx, t)
	l.finish()

	f.report(t, l)
}

// fleetIntervals are lifecycle-manager's defaults but for the requeue of a
// Ready Manifest, which is shorter so that the runtime is applied again
// between the steps, as often as the fleet's runtimes are over hours, and
// that the skipped Manifest is looked at several times.
func fleetIntervals() klm.Intervals {
	iv := klm.DefaultIntervals()
	iv.Success = 15 * time.Second
	return iv
}

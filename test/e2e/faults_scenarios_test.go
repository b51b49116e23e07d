package e2e

import (
	"context"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/kyma-project/kim-snatch/test/framework"
)

// platformFault is one scenario. prepare runs before the load starts and
// returns the fault: it calls renew at the moment the scenario renews the
// certificate (a no-op under steady load), breaks the platform, heals it,
// and returns when the heal began.
type platformFault struct {
	name    string
	prepare func(t *testing.T, s *nodeSystem) (inject func(renew func()) (healed time.Time))
	// tier is the tier of the node suites that runs the scenario under
	// load, if any (framework.InTier); make chaos runs every scenario
	// under each of its loads.
	tier framework.Tier
	load string
	// loads are rotation and steady, unless set.
	loads []string
}

// subtest names the scenario and the invariant its name stands for, of
// all those it holds: no create fails because of the webhook
// (kube-apiserver_killed_fails_no_create). The name as written heads the
// scenario's row of the table.
func (f platformFault) subtest() string {
	return strings.ReplaceAll(f.name, " ", "_") + "_fails_no_create"
}

// FaultsEnv set to "all" runs every scenario under both loads, as make
// chaos does; otherwise only those with a tier run, under its load.
const FaultsEnv = "SNATCH_FAULTS"

const (
	loadRotation = "rotation"
	loadSteady   = "steady"
)

// renewFirst is a fault that the renewal precedes: the platform fails in
// the middle of the rotation, while the replicas still serve the old
// certificate.
func renewFirst(fault func() time.Time) func(renew func()) time.Time {
	return func(renew func()) time.Time {
		renew()
		return fault()
	}
}

func platformFaults() []platformFault {
	// downFor kills a control-plane component with sig, leaves it down for
	// d and starts it again; the heal is the start.
	downFor := func(name string, sig syscall.Signal, d time.Duration) func(*testing.T, *nodeSystem) func(func()) time.Time {
		return func(t *testing.T, s *nodeSystem) func(func()) time.Time {
			// The scenarios after a failed one need the control plane.
			t.Cleanup(func() {
				if s.cluster.Down(name) {
					must(t, s.cluster.Revive(context.Background(), name))
				}
			})
			return renewFirst(func() time.Time {
				must(t, s.cluster.Kill(name, sig))
				time.Sleep(d)
				healed := time.Now()
				must(t, s.cluster.Revive(t.Context(), name))
				return healed
			})
		}
	}
	// restart restarts one of the node's components; the heal is the
	// restart's start.
	restart := func(name string) func(*testing.T, *nodeSystem) func(func()) time.Time {
		return func(t *testing.T, s *nodeSystem) func(func()) time.Time {
			return renewFirst(func() time.Time {
				healed := time.Now()
				must(t, s.cluster.Node.Restart(t.Context(), name))
				return healed
			})
		}
	}
	// toxic puts a toxic on the path from kube-apiserver to the webhook
	// for 30 s.
	toxic := func(typ, stream string, toxicity float64, attrs map[string]any) func(*testing.T, *nodeSystem) func(func()) time.Time {
		return func(t *testing.T, _ *nodeSystem) func(func()) time.Time {
			tp := slowPath(t)
			return renewFirst(func() time.Time {
				remove, err := tp.toxic(t.Context(), typ, typ, stream, toxicity, attrs)
				must(t, err)
				time.Sleep(30 * time.Second)
				healed := time.Now()
				must(t, remove())
				return healed
			})
		}
	}
	return []platformFault{
		{name: "kube-apiserver killed", prepare: downFor(framework.APIServer, syscall.SIGKILL, 0), tier: framework.Smoke, load: loadSteady},
		{name: "kube-apiserver stopped 60s", prepare: downFor(framework.APIServer, syscall.SIGTERM, 60*time.Second)},
		{name: "etcd stalled 30s", prepare: func(t *testing.T, s *nodeSystem) func(func()) time.Time {
			return renewFirst(func() time.Time {
				thaw, err := s.cluster.Freeze(framework.Etcd)
				must(t, err)
				time.Sleep(30 * time.Second)
				healed := time.Now()
				must(t, thaw())
				return healed
			})
		}},
		{name: "etcd restarted", prepare: downFor(framework.Etcd, syscall.SIGKILL, 0)},
		{name: "containerd restarted", prepare: restart("containerd")},
		{name: "kubelet restarted", prepare: restart("kubelet")},
		// The full tier's slow path stays within the timeout: calls that
		// fail open would keep the term objective's burn alerts active into
		// the tests that follow in make e2e.
		{name: "path to the webhook +500ms", prepare: toxic("latency", "downstream", 1, map[string]any{"latency": 500}), tier: framework.Full, load: loadSteady},
		{name: "path to the webhook +1.5s", prepare: toxic("latency", "downstream", 1, map[string]any{"latency": 1500})},
		{name: "path to the webhook +3s", prepare: toxic("latency", "downstream", 1, map[string]any{"latency": 3000})},
		{name: "path to the webhook resets 30% of connections", prepare: toxic("reset_peer", "upstream", 0.3, map[string]any{"timeout": 0})},
		// The cut spans the renewal: the syncer cannot see the new CA
		// until the heal.
		{name: "syncers cut off from kube-apiserver 30s", prepare: func(t *testing.T, s *nodeSystem) func(func()) time.Time {
			return func(renew func()) time.Time {
				heal := cutSyncersOff(t)
				time.Sleep(5 * time.Second)
				renew()
				time.Sleep(25 * time.Second)
				healed := time.Now()
				heal()
				return healed
			}
		}},
		// A second renewal before the kubelet has projected the first.
		{name: "Secret renewed twice", tier: framework.Full, load: loadRotation, loads: []string{loadRotation}, prepare: func(*testing.T, *nodeSystem) func(func()) time.Time {
			return func(renew func()) time.Time {
				renew()
				renew()
				return time.Now()
			}
		}},
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

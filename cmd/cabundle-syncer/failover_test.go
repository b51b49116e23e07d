package main

import (
	"context"
	"fmt"
	"strings"
	"syscall"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/kyma-project/kim-snatch/pkg/certtest"
	"github.com/kyma-project/kim-snatch/test/framework/poll"
)

// leaderOf waits until exactly one of ps leads and returns it and the others.
func leaderOf(t *testing.T, ps ...*syncerProcess) (*syncerProcess, []*syncerProcess) {
	t.Helper()
	var leader *syncerProcess
	var others []*syncerProcess
	poll.Eventually(t, fmt.Sprintf("a leader among %d replicas", len(ps)), func(context.Context) error {
		leader, others = nil, nil
		for _, p := range ps {
			select {
			case <-p.Done():
				return poll.Stop(fmt.Errorf("%s exited before a leader was elected: %v", p.Name, p.WaitErr()))
			default:
			}
			v, err := p.metric("cabundle_syncer_is_leader")
			switch {
			case err != nil:
				return fmt.Errorf("%s: %w", p.Name, err)
			case v == 1 && leader != nil:
				t.Errorf("both %s and %s report leadership", leader.Name, p.Name)
				return fmt.Errorf("both %s and %s report leadership", leader.Name, p.Name)
			case v == 1:
				leader = p
			default:
				others = append(others, p)
			}
		}
		if leader == nil {
			return fmt.Errorf("cabundle_syncer_is_leader is 0 on all %d", len(ps))
		}
		return nil
	})
	return leader, others
}

func TestTwoReplicasOnlyTheLeaderWritesAndAStandbyTakesOver(t *testing.T) {
	c := newCluster(t)
	cs := c.Clientset
	caA := certtest.MustCA(t, certtest.Options{CommonName: "ca-a"})
	setupObjects(t, cs, caA)

	args := append([]string{"--kubeconfig=" + c.KubeconfigPath, "--leader-election-namespace=" + namespace}, leaseFlags...)
	p1 := startSyncer(t, "replica-1", args...)
	p2 := startSyncer(t, "replica-2", args...)
	leader, rest := leaderOf(t, p1, p2)
	standby := rest[0]
	waitBundle(t, cs, caA.Fingerprint())

	// Only the leader writes.
	caB := certtest.MustCA(t, certtest.Options{CommonName: "ca-b"})
	putCA(t, cs, caB)
	waitBundle(t, cs, caB.Fingerprint(), caA.Fingerprint())
	leader.waitMetric("cabundle_syncer_updates_total", 2, 10*time.Second)
	checkStandbyIdle(t, standby)

	// SIGKILL the leader: it cannot release the Lease, so the standby takes
	// over once the Lease expires, at most the lease duration later.
	killLeader(t, cs, leader, standby)
	// The new leader writes.
	caC := certtest.MustCA(t, certtest.Options{CommonName: "ca-c"})
	putCA(t, cs, caC)
	waitBundle(t, cs, caC.Fingerprint(), caB.Fingerprint(), caA.Fingerprint())
	standby.waitMetric("cabundle_syncer_updates_total", 1, 10*time.Second)

	// SIGTERM the new leader with a fresh standby next to it: the leader
	// releases the Lease on its way out, and the standby takes it at its
	// next attempt, about one retry period later.
	p3 := startSyncer(t, "replica-3", args...)
	terminateLeader(t, standby, p3)
	caD := certtest.MustCA(t, certtest.Options{CommonName: "ca-d"})
	putCA(t, cs, caD)
	waitBundle(t, cs, caD.Fingerprint(), caC.Fingerprint(), caB.Fingerprint(), caA.Fingerprint())
	p3.waitMetric("cabundle_syncer_updates_total", 1, 10*time.Second)
}

func TestLeaderThatLosesTheLeaseExits(t *testing.T) {
	c := newCluster(t)
	cs := c.Clientset
	setupObjects(t, cs, certtest.MustCA(t, certtest.Options{CommonName: "ca"}))

	args := append([]string{"--kubeconfig=" + c.KubeconfigPath, "--leader-election-namespace=" + namespace}, leaseFlags...)
	p1 := startSyncer(t, "replica-1", args...)
	p2 := startSyncer(t, "replica-2", args...)
	leader, rest := leaderOf(t, p1, p2)
	standby := rest[0]

	// Freeze the leader past its lease; the standby takes over; when the
	// old leader wakes up it finds the Lease gone and must exit rather than
	// go on writing next to the new leader.
	leader.signal(syscall.SIGSTOP)
	standby.waitMetric("cabundle_syncer_is_leader", 1, 30*time.Second)
	leader.signal(syscall.SIGCONT)
	if code := leader.waitExit(30 * time.Second); code == 0 {
		t.Errorf("%s exited with 0 after losing the Lease, want a failure", leader.Name)
	}
	if !strings.Contains(leader.Log(), "leader election lost") {
		t.Errorf("%s did not log the lost election", leader.Name)
	}
	if standby.Exited() {
		t.Errorf("the new leader %s exited", standby.Name)
	}
}

// checkStandbyIdle wants standby ready, not leading, and never to have
// written.
func checkStandbyIdle(t *testing.T, standby *syncerProcess) {
	t.Helper()
	standby.waitReady(10 * time.Second)
	if v, err := standby.metric("cabundle_syncer_updates_total"); err != nil || v != 0 {
		t.Errorf("standby %s: cabundle_syncer_updates_total = %v (%v), want 0", standby.Name, v, err)
	}
	if v, err := standby.metric("cabundle_syncer_is_leader"); err != nil || v != 0 {
		t.Errorf("standby %s: cabundle_syncer_is_leader = %v (%v), want 0", standby.Name, v, err)
	}
	if strings.Contains(standby.Log(), "caBundle written") {
		t.Errorf("standby %s logged a write", standby.Name)
	}
}

// killLeader sends SIGKILL to the leader: it cannot release the Lease, so
// the standby takes over once the Lease expires, at most the lease
// duration later, and the Lease changes holder.
func killLeader(t *testing.T, cs kubernetes.Interface, leader, standby *syncerProcess) {
	t.Helper()
	ctx := context.Background()
	leases := cs.CoordinationV1().Leases(namespace)
	before, err := leases.Get(ctx, leaseName, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	killed := time.Now()
	leader.signal(syscall.SIGKILL)
	tookOver := standby.waitMetric("cabundle_syncer_is_leader", 1, 30*time.Second)
	t.Logf("SIGKILL of the leader: %s took over after %s (lease duration 4s, retry period 500ms)", standby.Name, tookOver.Sub(killed).Round(time.Millisecond))
	after, err := leases.Get(ctx, leaseName, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if *after.Spec.HolderIdentity == *before.Spec.HolderIdentity {
		t.Errorf("the Lease is still held by %s", *before.Spec.HolderIdentity)
	}
}

// terminateLeader sends SIGTERM to leader with a fresh standby next to it:
// the leader releases the Lease on its way out and exits 0, and the
// standby takes it at its next attempt, about one retry period later.
func terminateLeader(t *testing.T, leader, p3 *syncerProcess) {
	t.Helper()
	p3.waitReady(30 * time.Second)
	if v, err := p3.metric("cabundle_syncer_is_leader"); err != nil || v != 0 {
		t.Fatalf("replica-3: cabundle_syncer_is_leader = %v (%v), want 0 while %s leads", v, err, leader.Name)
	}
	terminated := time.Now()
	leader.signal(syscall.SIGTERM)
	handedOver := p3.waitMetric("cabundle_syncer_is_leader", 1, 30*time.Second)
	t.Logf("SIGTERM of the leader: replica-3 took over after %s (retry period 500ms)", handedOver.Sub(terminated).Round(time.Millisecond))
	if code := leader.waitExit(30 * time.Second); code != 0 {
		t.Errorf("%s exited with %d after SIGTERM, want 0", leader.Name, code)
	}
}

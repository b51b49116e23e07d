package e2e

import (
	"context"
	"testing"
	"time"

	"github.com/kyma-project/kim-snatch/test/framework"
)

// rotationUnderLoad creates Pods in a Kyma namespace at rate per second,
// renews the CA after lead, and goes on until every webhook replica has
// served the new certificate for another lead, so that the load spans the
// moment the kubelet swaps the replicas' files, a minute or more after the
// Secret changed. It returns the Pods that missed the term and the rise in
// the API server's fail-open count.
func rotationUnderLoad(t *testing.T, rate int) (missing []string, total int, failOpenRise float64, res loadResult) {
	t.Helper()
	const lead = 10 * time.Second
	ns := namespace(t, "e2e-rotation", true)
	before := failOpen(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan loadResult)
	go func() { done <- createLoad(ctx, ns, rate) }()

	time.Sleep(lead)
	fp, err := sys.Renew(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	renewed := time.Now()
	if err := sys.WaitBundleHas(context.Background(), time.Minute, fp); err != nil {
		t.Error(err)
	}
	inBundle := time.Since(renewed)
	if err := sys.WaitServed(context.Background(), fp); err != nil {
		t.Error(err)
	}
	logf("rotation: new CA in every caBundle %s after the Secret write, served by every replica after %s",
		inBundle.Round(time.Millisecond), time.Since(renewed).Round(time.Millisecond))
	time.Sleep(lead)
	cancel()

	res = <-done
	for _, err := range res.errors {
		t.Errorf("create Pod: %v", err)
	}
	missing, total = withoutTerm(t, ns)
	return missing, total, failOpen(t) - before, res
}

// The Secret changes, the syncer puts the new CA into the caBundle within
// a second, and the replicas keep serving the old certificate until the
// kubelet swaps their files. With the overlap the API server trusts both
// meanwhile: no Pod misses the term.
func TestCARotationUnderLoadLosesNothing(t *testing.T) {
	framework.InTier(t, framework.Smoke, "one CA rotation by cert-management under load, with the shipped overlap")
	framework.Alone(t, "it rotates the CA")
	missing, total, rise, res := rotationUnderLoad(t, 20)
	logf("rotation with --ca-overlap=1h: %d Pods created, %d without the term, fail-open count +%v, create p50 %s p99 %s",
		total, len(missing), rise, res.percentile(0.5), res.percentile(0.99))
	if total == 0 {
		t.Fatal("no Pods were created")
	}
	if len(missing) != 0 {
		t.Errorf("%d of %d Pods were created without the term during the rotation: %v", len(missing), total, missing)
	}
	if rise != 0 {
		t.Errorf("apiserver_admission_webhook_fail_open_count rose by %v during the rotation, want 0", rise)
	}
}

// The same rotation with --ca-overlap=0: the caBundle holds only the new
// CA while the replicas still serve the old certificate, so the API server
// cannot verify them and admits Pods without the term. This is the gap the
// overlap closes.
func TestCARotationWithoutOverlapMissesPods(t *testing.T) {
	framework.InTier(t, framework.Full, "a rotation that proves the overlap's need; the smoke rotates once, as shipped")
	framework.Alone(t, "it rotates the CA without the overlap")
	ctx := context.Background()
	if err := sys.SetCAOverlap(ctx, 0); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := sys.SetCAOverlap(ctx, time.Hour); err != nil {
			t.Errorf("restore --ca-overlap=1h: %v", err)
		}
	})
	missing, total, rise, _ := rotationUnderLoad(t, 20)
	logf("rotation with --ca-overlap=0: %d Pods created, %d without the term, fail-open count +%v", total, len(missing), rise)
	if len(missing) == 0 {
		t.Errorf("without the overlap no Pod of %d missed the term; want some, or this test no longer shows what the overlap is for", total)
	}
	// The API server's verdict on each call is the only cause of a
	// missing term here: every Pod without it was admitted failing open.
	if float64(len(missing)) != rise {
		t.Errorf("%d Pods missed the term but the fail-open count rose by %v; want them equal", len(missing), rise)
	}
}

// The leader dies right after the Secret changes; the standby takes over
// the Lease and the caBundle still converges on the new CA.
func TestSyncerLeaderKilledMidRotation(t *testing.T) {
	framework.InTier(t, framework.Full, "a rotation under a fault; the smoke rotates once, as shipped")
	framework.Alone(t, "it rotates the CA and kills the syncer's leader")
	ctx := context.Background()
	t.Cleanup(func() {
		if err := sys.RestoreSyncers(ctx); err != nil {
			t.Errorf("restore syncers: %v", err)
		}
	})
	fp, err := sys.Renew(ctx)
	if err != nil {
		t.Fatal(err)
	}
	renewed := time.Now()
	if err := sys.KillSyncerLeader(ctx); err != nil {
		t.Fatal(err)
	}
	if err := sys.WaitBundleHas(ctx, 2*time.Minute, fp); err != nil {
		t.Fatal(err)
	}
	logf("leader SIGKILLed mid-rotation: caBundle converged %s after the Secret write", time.Since(renewed).Round(time.Millisecond))
	if err := sys.WaitServed(ctx, fp); err != nil {
		t.Fatal(err)
	}
}

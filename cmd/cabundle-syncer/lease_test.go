package main

import (
	"context"
	"strings"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/kyma-project/kim-snatch/pkg/certtest"
)

// deploy/syncer ships the Lease so that the ServiceAccount needs no create
// (lease.yaml says why). Leader election takes the shipped Lease, whose
// spec is empty, with update alone. A deleted Lease cannot be recreated by
// the syncer: the leader steps down, and once the Lease is applied again a
// replica leads, as docs/operations.md ("Least privilege") tells operators.
func TestShippedLeaseNeedsNoCreate(t *testing.T) {
	c := newCluster(t)
	cs := c.Clientset
	ctx := context.Background()
	setupObjects(t, cs, certtest.MustCA(t, certtest.Options{CommonName: "ca"}))
	applyRBAC(t, c)
	saCfg, kubeconfig := serviceAccountConfig(t, c)
	sa := kubernetes.NewForConfigOrDie(saCfg)
	other := &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: "another-component"}}
	if _, err := sa.CoordinationV1().Leases(namespace).Create(ctx, other, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}}); !apierrors.IsForbidden(err) {
		t.Errorf("the ServiceAccount creates a Lease of another name: got %v, want Forbidden", err)
	}

	args := append([]string{"--kubeconfig=" + kubeconfig}, leaseFlags...)
	first := startSyncerEnv(t, "replica-1", []string{"POD_NAME=replica-1"}, args...)
	first.waitMetric("cabundle_syncer_is_leader", 1, 30*time.Second)
	lease, err := cs.CoordinationV1().Leases(namespace).Get(ctx, leaseName, metav1.GetOptions{})
	if err != nil || lease.Spec.HolderIdentity == nil || !strings.HasPrefix(*lease.Spec.HolderIdentity, "replica-1_") {
		t.Fatalf("the shipped Lease is not held by replica-1: %+v, %v", lease, err)
	}

	if err := cs.CoordinationV1().Leases(namespace).Delete(ctx, leaseName, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	if code := first.waitExit(30 * time.Second); code == 0 {
		t.Errorf("the leader exited with 0 after its Lease was deleted, want the lost lead's error")
	}
	if log := first.Log(); !strings.Contains(log, "forbidden") {
		t.Errorf("the leader's log does not say that creating the Lease was refused:\n%s", first.LogTail(20))
	}
	applyManifests(t, c, "lease.yaml")
	second := startSyncerEnv(t, "replica-2", []string{"POD_NAME=replica-2"}, args...)
	second.waitMetric("cabundle_syncer_is_leader", 1, 30*time.Second)
}

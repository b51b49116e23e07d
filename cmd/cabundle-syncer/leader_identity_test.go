package main

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kyma-project/kim-snatch/pkg/certtest"
	"github.com/kyma-project/kim-snatch/test/framework/poll"
)

// The Lease names the leader's Pod, so that `cabundle-syncer check` can
// find it. A Pod name may be longer than the 63 characters a hostname
// keeps, which is why it comes from $POD_NAME and not from the hostname.
func TestLeaderHoldsTheLeaseAsItsPodName(t *testing.T) {
	c := newCluster(t)
	cs := c.Clientset
	setupObjects(t, cs, certtest.MustCA(t, certtest.Options{CommonName: "ca"}))

	podName := "cabundle-syncer-" + strings.Repeat("long-", 10) + "7d9f8c6b5-x2k4q"
	args := append([]string{"--kubeconfig=" + c.KubeconfigPath, "--leader-election-namespace=" + namespace}, leaseFlags...)
	p := startSyncerEnv(t, "replica-1", []string{"POD_NAME=" + podName}, args...)
	p.waitMetric("cabundle_syncer_is_leader", 1, 30*time.Second)

	var holder string
	poll.Eventually(t, "a holder of the Lease", func(ctx context.Context) error {
		lease, err := cs.CoordinationV1().Leases(namespace).Get(ctx, leaseName, metav1.GetOptions{})
		switch {
		case err != nil:
			return err
		case lease.Spec.HolderIdentity == nil || *lease.Spec.HolderIdentity == "":
			return errors.New("the Lease has no holder")
		}
		holder = *lease.Spec.HolderIdentity
		return nil
	}, poll.Timeout(10*time.Second))
	name, suffix, ok := cutLast(holder, "_")
	if !ok || name != podName || suffix == "" {
		t.Errorf("Lease holder = %q, want %q_<uuid>", holder, podName)
	}
}

package stack

import (
	"context"
	"fmt"
	"net/http"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/kyma-project/kim-snatch/test/framework"
)

// Lease timings of the local syncers: short, so that a failover takes
// seconds. They keep client-go's proportions: lease > renew > 1.2 × retry.
var leaseFlags = []string{
	"--leader-election-lease-duration=4s",
	"--leader-election-renew-deadline=3s",
	"--leader-election-retry-period=500ms",
}

func (s *Stack) startSyncers(ctx context.Context) error {
	n := s.opts.SyncerReplicas
	ports, err := framework.FreePorts(2 * n)
	if err != nil {
		return err
	}
	if err := s.applySyncerRBAC(ctx); err != nil {
		return err
	}
	s.opts.Progress("starting %d cabundle-syncer replicas with leader election (--ca-overlap=%s)", n, s.opts.CAOverlap)
	for i := range n {
		name := fmt.Sprintf("%s-%d", SyncerName, i)
		if err := s.writeSyncerKubeconfig(ctx, name); err != nil {
			return err
		}
		r := &Replica{
			Name: name, App: SyncerName,
			MetricsAddr: localAddr(ports[2*i]), ProbeAddr: localAddr(ports[2*i+1]),
			path:   s.syncerBin,
			env:    []string{"POD_NAME=" + name, "POD_NAMESPACE=" + Namespace},
			logDir: s.opts.Dir,
			client: &http.Client{Timeout: 2 * time.Second},
		}
		r.args = s.syncerArgs(r)
		s.Syncers = append(s.Syncers, r)
		if err := r.Start(); err != nil {
			return err
		}
	}
	for _, r := range s.Syncers {
		if err := r.WaitReady(ctx, time.Minute); err != nil {
			return err
		}
	}
	return nil
}

func (s *Stack) syncerArgs(r *Replica) []string {
	return append([]string{
		"--kubeconfig=" + s.syncerKubeconfigPath(r.Name),
		"--secret-namespace=" + Namespace,
		"--secret-name=" + SecretName,
		"--webhook-configuration=" + WebhookConfigName,
		"--ca-overlap=" + s.opts.CAOverlap.String(),
		"--leader-election-namespace=" + Namespace,
		"--leader-election-id=" + LeaseName,
		"--metrics-secure=false",
		"--metrics-bind-address=" + r.MetricsAddr,
		"--health-probe-bind-address=" + r.ProbeAddr,
	}, leaseFlags...)
}

// SetCAOverlap restarts the syncers, one at a time, with a new
// --ca-overlap (0 replaces the bundle on every rotation).
func (s *Stack) SetCAOverlap(ctx context.Context, overlap time.Duration) error {
	s.opts.CAOverlap = overlap
	for _, r := range s.Syncers {
		r.Stop()
		r.args = s.syncerArgs(r)
		if err := r.Start(); err != nil {
			return err
		}
		if err := r.WaitReady(ctx, time.Minute); err != nil {
			return err
		}
	}
	_, err := s.Leader(ctx, time.Minute)
	return err
}

// StopSyncers stops every syncer replica at once, as scaling the
// Deployment to zero does, and waits for them. The leader releases the
// Lease as it stops; nobody takes it.
func (s *Stack) StopSyncers(context.Context) error {
	stopAll(s.Syncers)
	return nil
}

// Leader waits until exactly one running syncer reports leadership and
// returns it.
func (s *Stack) Leader(ctx context.Context, timeout time.Duration) (*Replica, error) {
	var leader *Replica
	err := wait.PollUntilContextTimeout(ctx, 50*time.Millisecond, timeout, true, func(context.Context) (bool, error) {
		leader = nil
		for _, r := range s.Syncers {
			if !r.Running() {
				continue
			}
			v, err := r.Metric("cabundle_syncer_is_leader", "")
			if err != nil || v != 1 {
				continue
			}
			if leader != nil {
				return false, nil
			}
			leader = r
		}
		return leader != nil, nil
	})
	if err != nil {
		return nil, errorf("no syncer leads within %s: %w", timeout, err)
	}
	return leader, nil
}

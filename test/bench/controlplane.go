package bench

import (
	"context"
	"fmt"
	"time"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/kyma-project/kim-snatch/test/framework"
)

// startControlPlane starts a local control plane for the section, and a
// client without client-side rate limits, so that the section's own
// requests do not pace what it measures.
func (r *runner) startControlPlane(ctx context.Context, opts framework.Options) (*framework.Cluster, kubernetes.Interface, error) {
	startCtx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	cluster, err := framework.Start(startCtx, opts)
	cancel()
	if err != nil {
		return nil, nil, fmt.Errorf("start the control plane: %w", err)
	}
	r.stops = append(r.stops, func() { _ = cluster.Stop() })
	cfg := rest.CopyConfig(cluster.Config)
	cfg.QPS, cfg.Burst = -1, 0
	cs, err := kubernetes.NewForConfig(cfg)
	return cluster, cs, err
}

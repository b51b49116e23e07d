package e2e

import (
	"context"
	"errors"

	"github.com/kyma-project/kim-snatch/test/realnode"
)

// RuntimeEnv selects the installation when SNATCH_TEST_KUBECONFIG is
// unset: "node" runs the shipped images from deploy/ on a real node beside
// the local control plane; anything else runs the local stack.
const RuntimeEnv = "SNATCH_E2E_RUNTIME"

// nodeSystem is the shipped installation on a real node: deploy/ applied
// through test/e2e/overlay with kubectl, as on kind.
type nodeSystem struct {
	*clusterSystem
	cluster *realnode.Cluster
}

func newNodeSystem(ctx context.Context) (system, error) {
	cluster, err := realnode.StartCluster(ctx, realnode.ClusterOptions{
		Images:    []string{"snatch-webhook.tar", "cabundle-syncer.tar"},
		KymaNodes: 2, CustomerNodes: 2,
		Progress: func(format string, args ...any) { logf("node: "+format, args...) },
	})
	if err != nil {
		return nil, err
	}
	s := &nodeSystem{cluster: cluster}
	logf("node: applying deploy/ through test/e2e/overlay")
	if err := cluster.Apply(ctx, "test/e2e/overlay"); err != nil {
		return nil, errors.Join(err, s.Stop())
	}
	sys, err := newClusterSystem(ctx, cluster.KubeconfigPath)
	if err != nil {
		return nil, errors.Join(err, s.Stop())
	}
	s.clusterSystem = sys.(*clusterSystem)
	return s, nil
}

// Stop stops the cluster and fails if the host is not as the node found
// it.
func (s *nodeSystem) Stop() error { return s.cluster.Stop() }

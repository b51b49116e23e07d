package e2e

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"

	corev1 "k8s.io/api/core/v1"

	"github.com/kyma-project/kim-snatch/test/framework"
	"github.com/kyma-project/kim-snatch/test/realnode"
)

// RuntimeEnv selects the installation when SNATCH_TEST_KUBECONFIG is
// unset: "node" runs the shipped images from deploy/ on a real node beside
// the local control plane; anything else runs the local stack.
const RuntimeEnv = "SNATCH_E2E_RUNTIME"

// ImagesEnv names the folder of the image archives `make images` writes;
// it defaults to bin/images.
const ImagesEnv = "SNATCH_IMAGES"

// The real node: in the Kyma pool, where the system Pods select it
// (test/e2e/overlay), and tainted so that the suite's load goes to the
// Nodes without a kubelet.
const (
	systemNodeName  = "kim-snatch-system-0"
	systemNodeLabel = "e2e.kim-snatch.kyma-project.io/system-node"
	// sandboxImage is the pause image `make images` writes, as containerd
	// names it after the import.
	sandboxImage = "docker.io/library/kim-snatch-pause:e2e"
)

// nodeSystem is the shipped installation on a real node: a control plane,
// the node, kubelet-less Nodes in both pools for the load, and deploy/
// applied through test/e2e/overlay with kubectl, as on kind.
type nodeSystem struct {
	*clusterSystem
	cluster *framework.Cluster
	node    *realnode.Node
}

func newNodeSystem(ctx context.Context) (_ system, err error) {
	root, err := framework.RepoRoot()
	if err != nil {
		return nil, err
	}
	bin, err := framework.BinDir()
	if err != nil {
		return nil, err
	}
	images := cmp.Or(os.Getenv(ImagesEnv), filepath.Join(root, "bin", "images"))
	s := &nodeSystem{}
	defer func() {
		if err != nil {
			err = errors.Join(err, s.Stop())
		}
	}()
	s.node, err = realnode.Prepare(realnode.Options{
		BinDir:       bin,
		Name:         systemNodeName,
		Labels:       map[string]string{framework.PoolLabel: framework.KymaPool, systemNodeLabel: "true"},
		Taints:       []corev1.Taint{{Key: systemNodeLabel, Effect: corev1.TaintEffectNoSchedule}},
		Images:       []string{filepath.Join(images, "pause.tar"), filepath.Join(images, "snatch-webhook.tar"), filepath.Join(images, "cabundle-syncer.tar")},
		SandboxImage: sandboxImage,
		Progress:     func(format string, args ...any) { logf("node: "+format, args...) },
	})
	if err != nil {
		return nil, err
	}
	logf("node: starting the control plane at %s", realnode.NodeIP)
	s.cluster, err = framework.Start(ctx, framework.Options{
		Scheduler: true, ControllerManager: true,
		ServingIP: realnode.NodeIP, ServiceCIDR: realnode.ServiceCIDR,
		// Pods on the node need their ServiceAccount token; the node's
		// not-ready taint would wait for the node-lifecycle controller,
		// which does not run for the kubelet-less Nodes' sake.
		APIServerArgs: []string{"--disable-admission-plugins=TaintNodesByCondition"},
	})
	if err != nil {
		return nil, err
	}
	if err = s.node.Start(ctx, s.cluster.KubeconfigPath); err != nil {
		return nil, err
	}
	for pool, n := range map[string]int{framework.KymaPool: 2, framework.CustomerPool: 2} {
		if _, err = s.cluster.CreateNodes(ctx, pool, n); err != nil {
			return nil, err
		}
	}
	kubectl, err := framework.Kubectl()
	if err != nil {
		return nil, err
	}
	logf("node: applying deploy/ through test/e2e/overlay")
	apply := exec.CommandContext(ctx, kubectl, "--kubeconfig", s.cluster.KubeconfigPath, "apply", "--server-side", "-k", filepath.Join(root, "test/e2e/overlay"))
	if out, err := apply.CombinedOutput(); err != nil {
		return nil, fmt.Errorf("kubectl apply -k test/e2e/overlay: %w\n%s", err, out)
	}
	sys, err := newClusterSystem(ctx, s.cluster.KubeconfigPath)
	if err != nil {
		return nil, err
	}
	s.clusterSystem = sys.(*clusterSystem)
	return s, nil
}

// Stop stops the node, then the control plane, and fails if the host is not
// as the node found it.
func (s *nodeSystem) Stop() error {
	var errs []error
	if s.node != nil {
		errs = append(errs, s.node.Stop())
	}
	if s.cluster != nil {
		errs = append(errs, s.cluster.Stop())
	}
	return errors.Join(errs...)
}

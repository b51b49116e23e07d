package realnode

import (
	"context"
	"errors"
	"path/filepath"

	"github.com/kyma-project/kim-snatch/test/framework"
	"github.com/kyma-project/kim-snatch/test/tools"
)

// The system node: the one real node, in the Kyma pool. Its taint keeps
// load Pods on the kubelet-less Nodes; the system Pods tolerate it and
// select its label (test/e2e/overlay).
const (
	SystemNodeName  = "kim-snatch-system-0"
	SystemNodeLabel = "e2e.kim-snatch.kyma-project.io/system-node"
)

// SandboxImage is the pause image of `make images`, as containerd names it
// after the import.
const SandboxImage = "docker.io/library/kim-snatch-pause:e2e"

// ClusterOptions shape a cluster.
type ClusterOptions struct {
	// Images are archive names in the images folder to import besides
	// pause.tar, e.g. "snatch-webhook.tar".
	Images []string
	// KymaNodes and CustomerNodes are kubelet-less Nodes per pool.
	KymaNodes, CustomerNodes int
	// NoNetworkPolicies leaves NetworkPolicies unenforced. By default
	// kube-network-policies enforces them on the node (netpol.go).
	NoNetworkPolicies bool
	Progress          func(format string, args ...any)
}

// Cluster is the local control plane with kube-scheduler and
// kube-controller-manager, the system node, and kubelet-less Nodes in both
// pools for the load.
type Cluster struct {
	*framework.Cluster
	Node *Node
	// NetworkPolicies is nil with NoNetworkPolicies.
	NetworkPolicies *NetworkPolicies
}

// StartCluster routes the cluster's ranges to the local bridge, starts the
// control plane at NodeIP, then the node, and creates the kubelet-less
// Nodes. On error it stops what it started.
func StartCluster(ctx context.Context, opts ClusterOptions) (_ *Cluster, err error) {
	bin, err := framework.BinDir()
	if err != nil {
		return nil, err
	}
	images, err := tools.Images.Find()
	if err != nil {
		return nil, err
	}
	archives := []string{filepath.Join(images, "pause.tar")}
	for _, name := range opts.Images {
		archives = append(archives, filepath.Join(images, name))
	}
	c := &Cluster{}
	defer func() {
		if err != nil {
			err = errors.Join(err, c.Stop())
		}
	}()
	if c.Node, err = Prepare(Options{BinDir: bin, Images: archives, Progress: opts.Progress}); err != nil {
		return nil, err
	}
	c.Node.progress("starting the control plane at %s", NodeIP)
	c.Cluster, err = framework.Start(ctx, framework.Options{
		Scheduler: true, ControllerManager: true,
		ServingIP: NodeIP, ServiceCIDR: ServiceCIDR,
		APIServerArgs: []string{
			// ServiceAccount admission stays on: Pods on the node need
			// their token. The not-ready taint would wait for the
			// node-lifecycle controller, which does not run for the
			// kubelet-less Nodes' sake.
			"--disable-admission-plugins=TaintNodesByCondition",
			// The kubelet at NodeIP, never by its host name: that lookup
			// would go to the host's resolver, off this machine.
			"--kubelet-preferred-address-types=InternalIP",
		},
	})
	if err != nil {
		return nil, err
	}
	if err = c.Node.Start(ctx, c.KubeconfigPath, c.Clientset); err != nil {
		return nil, err
	}
	if !opts.NoNetworkPolicies {
		if c.NetworkPolicies, err = c.Node.startNetworkPolicies(ctx, c.Clientset, c.Config); err != nil {
			return nil, err
		}
	}
	for pool, n := range map[string]int{framework.KymaPool: opts.KymaNodes, framework.CustomerPool: opts.CustomerNodes} {
		if _, err = c.CreateNodes(ctx, pool, n); err != nil {
			return nil, err
		}
	}
	return c, nil
}

// Apply applies a kustomization folder, relative to the repository, with
// kubectl's server-side apply, as an operator would.
func (c *Cluster) Apply(ctx context.Context, dir string) error {
	root, err := tools.RepoRoot()
	if err != nil {
		return err
	}
	_, err = framework.RunKubectl(ctx, framework.KubectlOptions{Kubeconfig: c.KubeconfigPath}, "apply", "--server-side", "-k", filepath.Join(root, dir))
	return err
}

// Stop stops kube-network-policies, the node, then the control plane, and
// fails if the host is not as the node found it.
func (c *Cluster) Stop() error {
	var errs []error
	if c.NetworkPolicies != nil {
		c.NetworkPolicies.Stop()
	}
	if c.Node != nil {
		errs = append(errs, c.Node.Stop())
	}
	if c.Cluster != nil {
		errs = append(errs, c.Cluster.Stop())
	}
	return errors.Join(errs...)
}

package framework

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	"github.com/kyma-project/kim-snatch/test/process"
)

// KubeconfigEnv names an existing cluster to use instead of starting one.
const KubeconfigEnv = "SNATCH_TEST_KUBECONFIG"

// KeepEnv, when set to a non-empty value, keeps the cluster's directory
// (logs, kubeconfig, etcd data) after Stop, for debugging.
const KeepEnv = "SNATCH_KEEP_CLUSTER"

// Options says which components to start.
type Options struct {
	// Scheduler starts kube-scheduler, so that Pods are bound to Nodes.
	Scheduler bool
	// ControllerManager starts kube-controller-manager, so that Deployments
	// create ReplicaSets and Pods, and garbage collection runs.
	ControllerManager bool
	// AggregatorRouting has kube-apiserver call a webhook or an aggregated
	// API at a ready endpoint of its Service instead of at the ClusterIP,
	// which nothing routes without kube-proxy.
	AggregatorRouting bool
	// ServingIP, when set, is the address kube-apiserver binds and
	// advertises instead of 127.0.0.1, and ServiceCIDR its Service range;
	// its serving certificate then also names the kubernetes Service, so
	// that Pods on a real node reach it (package realnode).
	ServingIP   string
	ServiceCIDR string
	// APIServerArgs are extra kube-apiserver flags, "--name=value" or
	// "--name", each replacing the value the framework or envtest gives it,
	// list flags such as --disable-admission-plugins included.
	APIServerArgs []string
}

// Cluster is a running control plane, or an existing cluster.
type Cluster struct {
	// Config, Clientset built from it, and KubeconfigPath, a kubeconfig file
	// for kubectl and for processes under test, authenticate as a member of
	// system:masters.
	Config         *rest.Config
	Clientset      kubernetes.Interface
	KubeconfigPath string
	// Dir holds the logs, certificates and etcd data of a started cluster.
	// It is empty for an existing cluster.
	Dir string

	external  bool
	env       *envtest.ControlPlane
	plane     []*planeComponent  // etcd, kube-apiserver
	processes []*process.Process // kube-scheduler, kube-controller-manager
	nodeSeq   int
}

// New starts a cluster for t and stops it when t ends. It fails t if the
// cluster does not come up.
func New(t testing.TB, opts Options) *Cluster {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	c, err := Start(ctx, opts)
	if err != nil {
		t.Fatalf("start control plane: %v", err)
	}
	t.Cleanup(func() {
		if t.Failed() && c.Dir != "" {
			t.Logf("control plane logs: %s (set %s=1 to keep them)", c.Dir, KeepEnv)
		}
		if err := c.Stop(); err != nil {
			t.Errorf("stop control plane: %v", err)
		}
	})
	return c
}

// Integration is New for an integration test of pkg/ or cmd/: it skips t
// under -short and, when needsOwn says why t needs a cluster started here,
// against an existing cluster.
func Integration(t testing.TB, opts Options, needsOwn string) *Cluster {
	t.Helper()
	if testing.Short() {
		t.Skip("integration test: needs the control plane from `make tools`")
	}
	c := New(t, opts)
	if needsOwn != "" && c.External() {
		t.Skip(needsOwn)
	}
	return c
}

// Start starts the components named by opts, or connects to the existing
// cluster named by SNATCH_TEST_KUBECONFIG. It returns once kube-apiserver
// reports ready. On error nothing is left running.
func Start(ctx context.Context, opts Options) (*Cluster, error) {
	if kubeconfig := os.Getenv(KubeconfigEnv); kubeconfig != "" {
		return connect(kubeconfig)
	}
	dir, err := os.MkdirTemp("", "kim-snatch-cluster-")
	if err != nil {
		return nil, err
	}
	c := &Cluster{Dir: dir}
	if err := c.start(ctx, opts); err != nil {
		_ = c.Stop()
		return nil, err
	}
	return c, nil
}

func connect(kubeconfig string) (*Cluster, error) {
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		return nil, fmt.Errorf("load kubeconfig %s: %w", kubeconfig, err)
	}
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	return &Cluster{Config: cfg, Clientset: cs, KubeconfigPath: kubeconfig, external: true}, nil
}

// Clients returns the typed and the dynamic client of cfg, for a suite that
// reads both built-in objects and custom resources.
func Clients(cfg *rest.Config) (kubernetes.Interface, dynamic.Interface, error) {
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, nil, err
	}
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return nil, nil, err
	}
	return cs, dyn, nil
}

func (c *Cluster) start(ctx context.Context, opts Options) error {
	if err := c.startControlPlane(ctx, opts); err != nil {
		return err
	}
	// Tests create Pods in bursts; the defaults (5 QPS) would measure
	// client-side throttling instead of the cluster.
	admin, err := c.env.AddUser(envtest.User{Name: "kim-snatch-admin", Groups: []string{"system:masters"}}, &rest.Config{QPS: 500, Burst: 1000})
	if err != nil {
		return err
	}
	c.Config = admin.Config()
	if c.Clientset, err = kubernetes.NewForConfig(c.Config); err != nil {
		return err
	}
	kubeconfig, err := admin.KubeConfig()
	if err != nil {
		return err
	}
	c.KubeconfigPath = filepath.Join(c.Dir, "kubeconfig")
	if err := os.WriteFile(c.KubeconfigPath, kubeconfig, 0o600); err != nil {
		return err
	}
	if err := c.waitReadyz(ctx); err != nil {
		return err
	}

	if opts.Scheduler {
		if err := c.startComponent("kube-scheduler", "--kubeconfig="+c.KubeconfigPath,
			"--leader-elect=false", "--secure-port=0", "--v=1"); err != nil {
			return err
		}
	}
	if opts.ControllerManager {
		return c.startControllerManager()
	}
	return nil
}

// startControllerManager starts kube-controller-manager. It signs legacy
// token Secrets with envtest's ServiceAccount key, which kube-apiserver
// verifies, and publishes its kubeconfig's CA, kube-apiserver's, as the
// kube-root-ca.crt ConfigMap (TestControllerManagerSignsTokensTheAPIServerAccepts).
func (c *Cluster) startControllerManager() error {
	saKey := filepath.Join(c.Dir, "sa-signer.key")
	if _, err := os.Stat(saKey); err != nil {
		return fmt.Errorf("envtest's ServiceAccount signing key: %w", err)
	}
	return c.startComponent("kube-controller-manager",
		"--kubeconfig="+c.KubeconfigPath,
		"--leader-elect=false",
		"--secure-port=0",
		// Nodes have no kubelet to heartbeat them; the node-lifecycle
		// controller would mark them NotReady and evict their Pods.
		"--controllers=*,-node-lifecycle-controller",
		"--service-account-private-key-file="+saKey,
		"--use-service-account-credentials=false",
		"--v=1",
	)
}

// startComponent starts a component that needs no readiness wait: Pods and
// Deployments queue until the scheduler and the controllers catch up.
func (c *Cluster) startComponent(name string, args ...string) error {
	path, err := binary(name)
	if err != nil {
		return err
	}
	p, err := process.Start(process.Options{Name: name, Path: path, Args: args, LogPath: filepath.Join(c.Dir, name+".log")})
	if err != nil {
		return err
	}
	c.processes = append(c.processes, p)
	return nil
}

// External reports whether the cluster was not started by this package.
func (c *Cluster) External() bool { return c.external }

// PIDs returns the process IDs of the started components in start order:
// etcd, kube-apiserver, then kube-scheduler and kube-controller-manager when
// requested.
func (c *Cluster) PIDs() []int {
	pids := make([]int, 0, len(c.plane)+len(c.processes))
	for _, p := range c.plane {
		if p.proc != nil {
			pids = append(pids, p.proc.Pid)
		}
	}
	for _, p := range c.processes {
		pids = append(pids, p.PID())
	}
	return pids
}

// Healthy returns an error naming any component that has exited.
func (c *Cluster) Healthy() error {
	var errs []error
	for _, p := range c.plane {
		if p.exited() {
			errs = append(errs, p.errExited())
		}
	}
	for _, p := range c.processes {
		if p.Exited() {
			errs = append(errs, fmt.Errorf("%s exited: %v; last log lines:\n%s", p.Name, p.WaitErr(), p.LogTail(40)))
		}
	}
	return errors.Join(errs...)
}

// Stop stops the components in the reverse order of their start and removes
// the cluster's directory, unless SNATCH_KEEP_CLUSTER is set. It is safe to
// call more than once. For an existing cluster it does nothing.
func (c *Cluster) Stop() error {
	for _, p := range slices.Backward(c.processes) {
		p.Stop(stopGrace)
	}
	c.stopControlPlane()
	if c.Dir == "" || os.Getenv(KeepEnv) != "" {
		return nil
	}
	return os.RemoveAll(c.Dir)
}

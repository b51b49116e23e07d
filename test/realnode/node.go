package realnode

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"syscall"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/kyma-project/kim-snatch/test/framework"
	"github.com/kyma-project/kim-snatch/test/framework/poll"
	"github.com/kyma-project/kim-snatch/test/process"
)

// DefaultStateDir is where a node keeps its state, a fixed place so that
// the next run finds what a killed one left.
const DefaultStateDir = "/var/tmp/kim-snatch-node"

// lockPath is one for the host, whatever the state folder: two nodes would
// use the same devices, ranges and fixed paths.
const lockPath = "/var/tmp/kim-snatch-node.lock"

// commands are what the node runs from the host; hack/e2e/node-prerequisites.sh
// installs their Debian packages.
var commands = []string{"containerd", "ctr", "runc", "/usr/lib/cni/bridge", "iptables", "nft", "ip"}

// Options describe the node.
type Options struct {
	// BinDir holds kubelet and kube-proxy.
	BinDir string
	// Images are docker-archive tarballs imported before the kubelet
	// starts; Pods run them with imagePullPolicy Never. One of them holds
	// SandboxImage.
	Images []string
	// Progress, if set, is told what happens.
	Progress func(format string, args ...any)
}

// Node is the system node, running.
type Node struct {
	opts       Options
	dir        string
	kubeconfig string
	client     kubernetes.Interface
	before     HostState
	lock       *os.File     // on lockPath while the node runs
	procs      []*component // containerd, kubelet, kube-proxy
}

// component is one of the node's processes, with how it was started and
// how often Restart started it again.
type component struct {
	*process.Process
	opts     process.Options
	restarts int
}

// Prepare cleans up what an earlier run left, records the host and routes
// the cluster's ranges to ContainDevice, which also gives the host NodeIP
// for kube-apiserver to bind. It must run before any component starts.
func Prepare(opts Options) (*Node, error) {
	if err := CheckPrerequisites(); err != nil {
		return nil, err
	}
	n := &Node{opts: opts, dir: DefaultStateDir}
	var err error
	if n.lock, err = lock(lockPath); err != nil {
		return nil, err
	}
	n.progress("cleaning up what an earlier run left in %s", n.dir)
	if diff, err := clean(n.dir, opts.BinDir); err != nil || diff != "" {
		return nil, errors.Join(fmt.Errorf("clean up the earlier run: %w\n%s", err, diff), n.lock.Close())
	}
	if err := os.MkdirAll(n.dir, 0o700); err != nil {
		return nil, errors.Join(err, n.lock.Close())
	}
	if n.before, err = ReadHostState(n.dir); err != nil {
		return nil, errors.Join(err, n.Stop())
	}
	if err := record(n.dir, n.before); err != nil {
		return nil, errors.Join(err, n.Stop())
	}
	n.progress("routing %v to %s", containedRanges, ContainDevice)
	if err := contain(); err != nil {
		return nil, errors.Join(err, n.Stop())
	}
	return n, nil
}

// Start starts containerd, imports the images, and starts the kubelet and
// kube-proxy with kubeconfig, whose server must be at NodeIP. It returns
// once client sees the Node Ready.
func (n *Node) Start(ctx context.Context, kubeconfig string, client kubernetes.Interface) error {
	n.kubeconfig, n.client = kubeconfig, client
	if err := n.writeConfigs(); err != nil {
		return err
	}
	if err := n.startProcess("containerd", "containerd", "--config", filepath.Join(n.dir, "containerd.toml")); err != nil {
		return err
	}
	sock := filepath.Join(n.dir, "containerd.sock")
	err := poll.Until(ctx, "containerd's socket", whileHealthy(n.Healthy, func(context.Context) error {
		if !fileExists(sock) {
			return fmt.Errorf("no %s yet", sock)
		}
		return nil
	}), poll.Timeout(3*time.Minute))
	if err != nil {
		return err
	}
	for _, img := range n.opts.Images {
		if err := n.ImportImage(img); err != nil {
			return err
		}
	}
	if err := n.startProcess("kubelet", filepath.Join(n.opts.BinDir, "kubelet"),
		"--config="+filepath.Join(n.dir, "kubelet.yaml"),
		"--kubeconfig="+kubeconfig,
		"--root-dir="+filepath.Join(n.dir, "kubelet"),
		"--cert-dir="+filepath.Join(n.dir, "kubelet", "pki"),
		"--hostname-override="+SystemNodeName,
		"--node-ip="+NodeIP,
		"--node-labels="+framework.PoolLabel+"="+framework.KymaPool+","+SystemNodeLabel+"=true",
		"--v=1",
	); err != nil {
		return err
	}
	if err := n.startProcess("kube-proxy", filepath.Join(n.opts.BinDir, "kube-proxy"),
		"--config="+filepath.Join(n.dir, "kube-proxy.yaml"), "--v=1"); err != nil {
		return err
	}
	return n.waitReady(ctx)
}

// ImportImage imports a docker-archive tarball into containerd, for Pods
// that run it with imagePullPolicy Never.
func (n *Node) ImportImage(archive string) error {
	n.progress("importing %s", filepath.Base(archive))
	_, err := run("ctr", "-a", filepath.Join(n.dir, "containerd.sock"), "-n", "k8s.io", "images", "import", archive)
	return err
}

// waitReady waits until the Node reports Ready.
func (n *Node) waitReady(ctx context.Context) error {
	n.progress("waiting for Node %s to be Ready", SystemNodeName)
	return poll.Until(ctx, "Node "+SystemNodeName+" Ready", whileHealthy(n.Healthy, func(ctx context.Context) error {
		node, err := n.client.CoreV1().Nodes().Get(ctx, SystemNodeName, metav1.GetOptions{})
		if err != nil {
			return err
		}
		for _, c := range node.Status.Conditions {
			if c.Type == corev1.NodeReady && c.Status == corev1.ConditionTrue {
				return nil
			} else if c.Type == corev1.NodeReady {
				return fmt.Errorf("the Node's Ready condition is %s: %s", c.Status, c.Message)
			}
		}
		return errors.New("the Node has no Ready condition")
	}), poll.Timeout(3*time.Minute))
}

// whileHealthy returns cond, which ends its wait with poll.Stop once
// healthy fails.
func whileHealthy(healthy func() error, cond poll.Condition) poll.Condition {
	return func(ctx context.Context) error {
		if err := healthy(); err != nil {
			return poll.Stop(err)
		}
		return cond(ctx)
	}
}

func (n *Node) startProcess(name, path string, args ...string) error {
	n.progress("starting %s", name)
	o := process.Options{Name: name, Path: path, Args: args, LogPath: filepath.Join(n.dir, name+".log")}
	p, err := process.Start(o)
	if err != nil {
		return err
	}
	n.procs = append(n.procs, &component{Process: p, opts: o})
	return nil
}

// Healthy returns an error naming a component that has exited.
func (n *Node) Healthy() error {
	for _, c := range n.procs {
		if err := exited(c.Process); err != nil {
			return err
		}
	}
	return nil
}

// exited returns an error with the end and the last log lines of p if it
// has exited.
func exited(p *process.Process) error {
	if p.Exited() {
		return fmt.Errorf("%s exited: %v; last log lines:\n%s", p.Name, p.WaitErr(), p.LogTail(20))
	}
	return nil
}

// LogDir is where the components log, until Stop removes it.
func (n *Node) LogDir() string { return n.dir }

// Stop stops kube-proxy, the kubelet and containerd, removes every
// container and what the node changed on the host, and fails if the host
// is not as Start found it.
func (n *Node) Stop() error {
	for _, c := range slices.Backward(n.procs) {
		c.Stop(10 * time.Second)
	}
	n.procs = nil
	n.progress("removing the node's containers and host changes")
	diff, err := clean(n.dir, n.opts.BinDir)
	err = errors.Join(err, n.lock.Close())
	if err == nil && diff != "" {
		err = fmt.Errorf("the host is not as the node found it:\n%s", diff)
	}
	return err
}

// lock takes an exclusive lock on path, waiting while another node holds
// it. The kernel releases it when this process ends, however it ends.
func lock(path string) (*os.File, error) {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return nil, err
	}
	err = syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
	if errors.Is(err, syscall.EWOULDBLOCK) {
		fmt.Fprintf(os.Stderr, "realnode: another node runs on this host (%s); waiting for it to stop\n", path)
		err = syscall.Flock(int(f.Fd()), syscall.LOCK_EX)
	}
	if err != nil {
		return nil, errors.Join(fmt.Errorf("lock %s: %w", path, err), f.Close())
	}
	return f, nil
}

func (n *Node) progress(format string, args ...any) {
	if n.opts.Progress != nil {
		n.opts.Progress(format, args...)
	}
}

// CheckPrerequisites says what is missing for a node on this machine.
func CheckPrerequisites() error {
	var missing []string
	if runtime.GOOS != "linux" {
		missing = append(missing, "Linux (this is "+runtime.GOOS+")")
	}
	if os.Geteuid() != 0 {
		missing = append(missing, "root (containerd, the kubelet and kube-proxy change the host's network and cgroups)")
	}
	for _, cmd := range commands {
		if _, err := exec.LookPath(cmd); err != nil {
			missing = append(missing, cmd)
		}
	}
	if len(missing) > 0 {
		return fmt.Errorf("a real node cannot run here; missing: %s. hack/e2e/node-prerequisites.sh installs the packages on Debian; elsewhere use make e2e-kind", strings.Join(missing, "; "))
	}
	return nil
}

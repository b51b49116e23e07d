package framework

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
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
	// Kubeconfig names an existing cluster to use instead of starting one.
	// When empty, SNATCH_TEST_KUBECONFIG is consulted.
	Kubeconfig string
	// AggregatorRouting starts kube-apiserver with
	// --enable-aggregator-routing=true: it then calls a webhook or an
	// aggregated API named by a Service at a ready endpoint of the
	// Service's EndpointSlices instead of at its ClusterIP, which nothing
	// here routes, as there is no kube-proxy.
	AggregatorRouting bool
	// APIServerArgs are extra kube-apiserver flags, appended last so they win.
	APIServerArgs []string
}

// Cluster is a running control plane, or an existing cluster.
type Cluster struct {
	// Config authenticates as a member of system:masters.
	Config *rest.Config
	// Clientset is built from Config.
	Clientset kubernetes.Interface
	// KubeconfigPath is a kubeconfig file for Config, for kubectl and for
	// processes under test.
	KubeconfigPath string
	// Dir holds the logs, certificates and etcd data of a started cluster.
	// It is empty for an existing cluster.
	Dir string

	external  bool
	processes []*process // in start order; stopped in reverse
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

// Start starts the components named by opts, or connects to the existing
// cluster named by opts.Kubeconfig or SNATCH_TEST_KUBECONFIG. It returns once
// kube-apiserver reports ready. On error nothing is left running.
func Start(ctx context.Context, opts Options) (*Cluster, error) {
	kubeconfig := opts.Kubeconfig
	if kubeconfig == "" {
		kubeconfig = os.Getenv(KubeconfigEnv)
	}
	if kubeconfig != "" {
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

func (c *Cluster) start(ctx context.Context, opts Options) error {
	for _, name := range []string{etcdBinary, apiServerBinary} {
		if _, err := binary(name); err != nil {
			return err
		}
	}
	keys, err := writePKI(c.Dir)
	if err != nil {
		return fmt.Errorf("write certificates: %w", err)
	}
	ports, err := FreePorts(3)
	if err != nil {
		return err
	}
	etcdURL := "http://127.0.0.1:" + strconv.Itoa(ports[0])
	if err := c.startEtcd(ctx, etcdURL, ports[1]); err != nil {
		return err
	}
	host := "https://127.0.0.1:" + strconv.Itoa(ports[2])
	var extra []string
	if opts.AggregatorRouting {
		extra = append(extra, "--enable-aggregator-routing=true")
	}
	if err := c.startAPIServer(ctx, keys, etcdURL, ports[2], append(extra, opts.APIServerArgs...)); err != nil {
		return err
	}

	c.Config = &rest.Config{
		Host:            host,
		BearerToken:     keys.adminToken,
		TLSClientConfig: rest.TLSClientConfig{CAData: keys.caPEM},
		// Tests create Pods in bursts; the defaults (5 QPS) would measure
		// client-side throttling instead of the cluster.
		QPS:   500,
		Burst: 1000,
	}
	if c.Clientset, err = kubernetes.NewForConfig(c.Config); err != nil {
		return err
	}
	c.KubeconfigPath = filepath.Join(c.Dir, "kubeconfig")
	if err := writeKubeconfig(c.KubeconfigPath, host, keys); err != nil {
		return err
	}

	if opts.Scheduler {
		if err := c.startScheduler(); err != nil {
			return err
		}
	}
	if opts.ControllerManager {
		if err := c.startControllerManager(keys); err != nil {
			return err
		}
	}
	return nil
}

func (c *Cluster) startEtcd(ctx context.Context, clientURL string, peerPort int) error {
	path, err := binary(etcdBinary)
	if err != nil {
		return err
	}
	peerURL := "http://127.0.0.1:" + strconv.Itoa(peerPort)
	p, err := startProcess(etcdBinary, path, []string{
		"--name=default",
		"--data-dir=" + filepath.Join(c.Dir, "etcd"),
		"--listen-client-urls=" + clientURL,
		"--advertise-client-urls=" + clientURL,
		"--listen-peer-urls=" + peerURL,
		"--initial-advertise-peer-urls=" + peerURL,
		"--initial-cluster=default=" + peerURL,
		// The data lives for one test run; fsync would only cost time.
		"--unsafe-no-fsync",
		"--log-level=warn",
	}, c.Dir)
	if err != nil {
		return err
	}
	c.processes = append(c.processes, p)
	return waitReady(ctx, p, http.DefaultClient, clientURL+"/health", nil)
}

func (c *Cluster) startAPIServer(ctx context.Context, keys *pki, etcdURL string, port int, extra []string) error {
	path, err := binary(apiServerBinary)
	if err != nil {
		return err
	}
	args := []string{
		"--etcd-servers=" + etcdURL,
		"--bind-address=127.0.0.1",
		"--advertise-address=127.0.0.1",
		"--secure-port=" + strconv.Itoa(port),
		"--cert-dir=" + c.Dir,
		"--tls-cert-file=" + keys.certFile,
		"--tls-private-key-file=" + keys.keyFile,
		"--client-ca-file=" + keys.caFile,
		"--token-auth-file=" + keys.tokenAuthFile,
		"--service-account-issuer=https://kubernetes.default.svc.cluster.local",
		"--service-account-key-file=" + keys.saPublicFile,
		"--service-account-signing-key-file=" + keys.saKeyFile,
		"--service-cluster-ip-range=10.0.0.0/24",
		"--authorization-mode=RBAC",
		// ServiceAccount admission would make every Pod wait for its
		// namespace's default ServiceAccount, which only
		// kube-controller-manager creates. TaintNodesByCondition would taint
		// new Nodes not-ready until the node-lifecycle controller, which we
		// do not run (there are no kubelets), lifts the taint.
		"--disable-admission-plugins=ServiceAccount,TaintNodesByCondition",
		"--allow-privileged=true",
		"--endpoint-reconciler-type=none",
		"--profiling=false",
		"--v=1",
	}
	p, err := startProcess(apiServerBinary, path, append(args, extra...), c.Dir)
	if err != nil {
		return err
	}
	c.processes = append(c.processes, p)

	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(keys.caPEM)
	client := &http.Client{
		Timeout:   5 * time.Second,
		Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}},
	}
	header := http.Header{"Authorization": []string{"Bearer " + keys.adminToken}}
	return waitReady(ctx, p, client, "https://127.0.0.1:"+strconv.Itoa(port)+"/readyz", header)
}

func (c *Cluster) startScheduler() error {
	return c.startComponent(schedulerBinary,
		"--kubeconfig="+c.KubeconfigPath,
		"--leader-elect=false",
		"--secure-port=0",
		"--v=1",
	)
}

func (c *Cluster) startControllerManager(keys *pki) error {
	return c.startComponent(controllerManagerBinary,
		"--kubeconfig="+c.KubeconfigPath,
		"--leader-elect=false",
		"--secure-port=0",
		// Nodes have no kubelet to heartbeat them; the node-lifecycle
		// controller would mark them NotReady and evict their Pods.
		"--controllers=*,-node-lifecycle-controller",
		"--root-ca-file="+keys.caFile,
		"--service-account-private-key-file="+keys.saKeyFile,
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
	p, err := startProcess(name, path, args, c.Dir)
	if err != nil {
		return err
	}
	c.processes = append(c.processes, p)
	return nil
}

// External reports whether the cluster was not started by this package.
func (c *Cluster) External() bool { return c.external }

// PIDs returns the process IDs of the started components, in start order.
func (c *Cluster) PIDs() []int {
	pids := make([]int, 0, len(c.processes))
	for _, p := range c.processes {
		pids = append(pids, p.pid())
	}
	return pids
}

// Healthy returns an error naming any component that has exited.
func (c *Cluster) Healthy() error {
	var errs []error
	for _, p := range c.processes {
		if done, _ := p.exited(); done {
			errs = append(errs, p.errExited())
		}
	}
	return errors.Join(errs...)
}

// Stop stops the components in the reverse order of their start and removes
// the cluster's directory, unless SNATCH_KEEP_CLUSTER is set. It is safe to
// call more than once. For an existing cluster it does nothing.
func (c *Cluster) Stop() error {
	for i := len(c.processes) - 1; i >= 0; i-- {
		c.processes[i].stop(10 * time.Second)
	}
	if c.Dir == "" || os.Getenv(KeepEnv) != "" {
		return nil
	}
	return os.RemoveAll(c.Dir)
}

// waitReady polls url until it answers 200, the process exits, or ctx ends.
func waitReady(ctx context.Context, p *process, client *http.Client, url string, header http.Header) error {
	var lastErr error
	for {
		if done, _ := p.exited(); done {
			return p.errExited()
		}
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		if err != nil {
			return err
		}
		req.Header = header
		resp, err := client.Do(req)
		if err == nil {
			_ = resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
			err = fmt.Errorf("%s answered %s", url, resp.Status)
		}
		lastErr = err
		select {
		case <-ctx.Done():
			return fmt.Errorf("%s not ready: %w (last: %v); last log lines:\n%s", p.name, ctx.Err(), lastErr, p.logTail())
		case <-time.After(100 * time.Millisecond):
		}
	}
}

func writeKubeconfig(path, host string, keys *pki) error {
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters["local"] = &clientcmdapi.Cluster{Server: host, CertificateAuthorityData: keys.caPEM}
	cfg.AuthInfos[adminUser] = &clientcmdapi.AuthInfo{Token: keys.adminToken}
	cfg.Contexts["local"] = &clientcmdapi.Context{Cluster: "local", AuthInfo: adminUser}
	cfg.CurrentContext = "local"
	return clientcmd.WriteToFile(*cfg, path)
}

package framework

import (
	"bytes"
	"cmp"
	"context"
	"fmt"
	"net"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/envtest"

	"github.com/kyma-project/kim-snatch/pkg/certtest"
	"github.com/kyma-project/kim-snatch/test/framework/poll"
	"github.com/kyma-project/kim-snatch/test/process"
)

// stopGrace is how long a component may take to end after SIGTERM before it
// is killed.
const stopGrace = 10 * time.Second

// planeComponent is etcd or kube-apiserver, whose process envtest keeps to
// itself; proc is found through the PID file of its wrapper (see wrap).
type planeComponent struct {
	name, logPath string
	log           *os.File
	proc          *os.Process // nil until the component has started

	// For Kill and Revive (faults.go): what to run again, and the process
	// Revive started in place of envtest's, the starts-th.
	argv, env []string
	child     *process.Process
	starts    int
}

// exited reports whether the component has ended and been reaped. On Linux
// os.FindProcess holds a pidfd, so a PID the kernel hands out again is not
// mistaken for the component.
func (p *planeComponent) exited() bool {
	return p.proc == nil || p.proc.Signal(syscall.Signal(0)) != nil
}

func (p *planeComponent) errExited() error {
	return fmt.Errorf("%s exited; last log lines:\n%s", p.name, logTail(p.logPath))
}

// startControlPlane has envtest start etcd and kube-apiserver with the flags
// the tests need, each through the wrapper script of wrap. envtest returns
// once kube-apiserver answers /healthz.
func (c *Cluster) startControlPlane(ctx context.Context, opts Options) error {
	paths, err := c.preparePlane()
	if err != nil {
		return err
	}
	ports, err := FreePorts(3)
	if err != nil {
		return err
	}
	timeout := 2 * time.Minute // each of etcd's and kube-apiserver's start, without a deadline
	if deadline, ok := ctx.Deadline(); ok {
		timeout = time.Until(deadline)
	}
	c.env = c.newEnvtest(paths, ports, timeout, opts)
	if opts.ServingIP != "" {
		if c.env.APIServer.CA, err = writeServingCert(c.Dir, opts); err != nil {
			return err
		}
	}
	if err := c.env.Start(); err != nil {
		for _, p := range c.plane {
			err = fmt.Errorf("%w\nlast log lines of %s:\n%s", err, p.name, logTail(p.logPath))
		}
		return err
	}
	for _, p := range c.plane {
		if p.proc, err = readPIDFile(filepath.Join(c.Dir, p.name+".pid")); err != nil {
			return fmt.Errorf("find the process of %s: %w", p.name, err)
		}
	}
	return nil
}

// preparePlane writes the wrapper scripts of etcd and kube-apiserver and
// creates their log files, adding both to c.plane, and returns the scripts'
// paths by component name.
func (c *Cluster) preparePlane() (map[string]string, error) {
	setpriv, err := exec.LookPath("setpriv")
	if err != nil {
		return nil, fmt.Errorf("setpriv (util-linux) starts etcd and kube-apiserver with a parent-death signal: %w", err)
	}
	if err := os.Mkdir(filepath.Join(c.Dir, "bin"), 0o755); err != nil {
		return nil, err
	}
	paths := map[string]string{}
	for _, name := range []string{Etcd, APIServer} {
		if paths[name], err = c.wrap(setpriv, name); err != nil {
			return nil, err
		}
		logPath := filepath.Join(c.Dir, name+".log")
		log, err := os.Create(logPath)
		if err != nil {
			return nil, fmt.Errorf("create log file for %s: %w", name, err)
		}
		c.plane = append(c.plane, &planeComponent{name: name, logPath: logPath, log: log})
	}
	return paths, nil
}

// newEnvtest describes etcd and kube-apiserver to envtest: the wrappers at
// paths, the ports (etcd's client and peer port, kube-apiserver's, which is
// 443 on opts.ServingIP) and the log files of preparePlane.
func (c *Cluster) newEnvtest(paths map[string]string, ports []int, timeout time.Duration, opts Options) *envtest.ControlPlane {
	etcdLog, apiLog := c.plane[0].log, c.plane[1].log
	servingIP, securePort := cmp.Or(opts.ServingIP, "127.0.0.1"), strconv.Itoa(ports[2])
	if opts.ServingIP != "" {
		// The address is the node's own: kube-apiserver serves on 443
		// there, as in a cluster, so that NetworkPolicies that allow
		// egress to it by port see the port they name.
		securePort = "443"
	}
	env := &envtest.ControlPlane{
		// Explicit paths: envtest would otherwise let KUBEBUILDER_ASSETS or
		// TEST_ASSET_* name other binaries, without the wrapper.
		Etcd: &envtest.Etcd{
			Path:         paths[Etcd],
			URL:          &url.URL{Scheme: "http", Host: "127.0.0.1:" + strconv.Itoa(ports[0])},
			DataDir:      filepath.Join(c.Dir, "etcd"),
			StartTimeout: timeout,
			StopTimeout:  stopGrace,
			Out:          etcdLog,
			Err:          etcdLog,
		},
		APIServer: &envtest.APIServer{
			Path:    paths[APIServer],
			CertDir: c.Dir,
			SecureServing: envtest.SecureServing{
				ListenAddr: envtest.ListenAddr{Address: servingIP, Port: securePort},
			},
			StartTimeout: timeout,
			StopTimeout:  stopGrace,
			Out:          apiLog,
			Err:          apiLog,
		},
	}
	env.Etcd.Configure().
		// envtest picks the peer port from the kernel's ephemeral range;
		// see FreePorts for why that collides.
		Set("listen-peer-urls", "http://127.0.0.1:"+strconv.Itoa(ports[1])).
		Set("log-level", "warn")
	setAPIServerFlags(env.APIServer.Configure(), opts)
	return env
}

// setAPIServerFlags adds to envtest's defaults (RBAC, client certificates,
// a ServiceAccount signing key, ServiceAccount admission off, privileged
// containers allowed) what the tests need. Each of Options.APIServerArgs
// replaces the value set here or by envtest.
func setAPIServerFlags(args *envtest.Arguments, opts Options) {
	args.
		Set("advertise-address", "127.0.0.1").
		Set("service-account-issuer", "https://kubernetes.default.svc.cluster.local").
		// ServiceAccount admission would make every Pod wait for its
		// namespace's default ServiceAccount, which only
		// kube-controller-manager creates. TaintNodesByCondition would taint
		// new Nodes not-ready until the node-lifecycle controller, which we
		// do not run (there are no kubelets), lifts the taint.
		Set("disable-admission-plugins", "ServiceAccount,TaintNodesByCondition").
		Set("endpoint-reconciler-type", "none").
		Set("profiling", "false").
		Set("v", "1")
	if opts.ServingIP != "" {
		// The kubernetes Service's endpoint is the advertised address,
		// which Pods reach and the lease reconciler writes.
		args.Set("advertise-address", opts.ServingIP).
			Set("service-cluster-ip-range", opts.ServiceCIDR).
			Set("endpoint-reconciler-type", "lease")
	}
	if opts.AggregatorRouting {
		args.Set("enable-aggregator-routing", "true")
	}
	for _, a := range opts.APIServerArgs {
		name, value, hasValue := strings.Cut(strings.TrimLeft(a, "-"), "=")
		if hasValue {
			args.Set(name, value)
		} else {
			args.Enable(name)
		}
	}
}

// wrap writes <cluster dir>/bin/<name>, the script envtest starts in place of
// the binary. envtest gives its processes nothing but their own process
// group, so a test that dies without running Stop would leave them running
// (TestKilledTestLeavesNoProcess). The script records its PID, which exec
// keeps, in <cluster dir>/<name>.pid, for PIDs and Healthy, and execs the
// binary under setpriv --pdeathsig KILL: the kernel then kills the component
// when the thread that started it, in this test process, ends. The inner
// shell exits if that parent has gone before the signal was set, the race
// that os/exec closes the same way for its Pdeathsig.
func (c *Cluster) wrap(setpriv, name string) (string, error) {
	bin, err := binary(name)
	if err != nil {
		return "", err
	}
	script := "#!/bin/sh\n" +
		"echo $$ >" + shellQuote(filepath.Join(c.Dir, name+".pid")) + "\n" +
		"exec " + shellQuote(setpriv) + ` --pdeathsig KILL -- /bin/sh -c '[ "$PPID" = "$1" ] || exit 1; shift; exec "$@"' ` +
		name + ` "$PPID" ` + shellQuote(bin) + ` "$@"` + "\n"
	path := filepath.Join(c.Dir, "bin", name)
	return path, os.WriteFile(path, []byte(script), 0o755)
}

func shellQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// writeServingCert writes kube-apiserver's serving certificate into dir,
// where envtest then uses it instead of its own, and returns its CA. Besides
// envtest's names it holds the kubernetes Service's ClusterIP and DNS names,
// which in-cluster clients dial.
func writeServingCert(dir string, opts Options) ([]byte, error) {
	_, svc, err := net.ParseCIDR(opts.ServiceCIDR)
	if err != nil {
		return nil, fmt.Errorf("service CIDR: %w", err)
	}
	clusterIP := slices.Clone(svc.IP.To4())
	clusterIP[3]++
	ca, err := certtest.NewCA(certtest.Options{CommonName: "kim-snatch-apiserver-ca"})
	if err != nil {
		return nil, err
	}
	serving, err := ca.Issue(certtest.Options{
		CommonName: "kube-apiserver",
		DNSNames:   []string{"localhost", "kubernetes", "kubernetes.default", "kubernetes.default.svc", "kubernetes.default.svc.cluster.local"},
		IPs:        []net.IP{net.ParseIP(opts.ServingIP), clusterIP, net.IPv4(127, 0, 0, 1)},
	})
	if err != nil {
		return nil, err
	}
	// envtest writes its ServiceAccount signing pair only together with
	// its own serving certificate.
	sa, err := certtest.NewCA(certtest.Options{CommonName: "kim-snatch-sa-signer"})
	if err != nil {
		return nil, err
	}
	files := map[string][]byte{
		"apiserver.crt": serving.CertPEM, "apiserver.key": serving.KeyPEM,
		"sa-signer.crt": sa.CertPEM, "sa-signer.key": sa.KeyPEM,
	}
	for name, data := range files {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o600); err != nil {
			return nil, err
		}
	}
	return ca.CertPEM, nil
}

// readPIDFile opens a handle on the process whose PID the file holds. envtest
// runs each binary with --help before starting it, which writes the file
// too; once envtest reports the component started, it holds the running one.
func readPIDFile(path string) (*os.Process, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(data)))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return os.FindProcess(pid)
}

// waitReadyz polls kube-apiserver's /readyz until it answers 200. envtest
// waits only for /healthz, which does not wait for the informers to sync.
func (c *Cluster) waitReadyz(ctx context.Context) error {
	api := c.plane[1]
	err := poll.Until(ctx, api.name+"'s /readyz", func(ctx context.Context) error {
		if api.exited() {
			return poll.Stop(api.errExited())
		}
		return c.Clientset.Discovery().RESTClient().Get().AbsPath("/readyz").Do(ctx).Error()
	}, poll.Timeout(0))
	if err != nil && ctx.Err() != nil {
		return fmt.Errorf("%w; last log lines:\n%s", err, logTail(api.logPath))
	}
	return err
}

// stopControlPlane stops kube-apiserver, then etcd, Revive's processes
// before envtest's, and returns once both have been reaped.
func (c *Cluster) stopControlPlane() {
	for _, p := range slices.Backward(c.plane) {
		if p.child != nil {
			p.child.Stop(stopGrace)
		}
	}
	if c.env != nil {
		// envtest SIGKILLs a component that outlives StopTimeout; its error
		// then only says that it had to, which is all Stop promises.
		_ = c.env.Stop()
	}
	for _, p := range c.plane {
		p.waitExited(stopGrace)
		_ = p.log.Close()
	}
}

// logTail returns the last 4 KiB of a component's log, from a line's start.
func logTail(logPath string) string {
	data, err := os.ReadFile(logPath)
	if err != nil {
		return fmt.Sprintf("(no log: %v)", err)
	}
	if len(data) > 4096 {
		data = data[len(data)-4096:]
		if i := bytes.IndexByte(data, '\n'); i >= 0 {
			data = data[i+1:]
		}
	}
	return string(data)
}

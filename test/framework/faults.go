package framework

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/kyma-project/kim-snatch/test/framework/poll"
	"github.com/kyma-project/kim-snatch/test/process"
	"github.com/prometheus/procfs"
)

// The control plane's components that the platform-fault scenarios of the
// end-to-end suite crash, stop and stall, as a seed's maintenance or an
// overloaded etcd does to a Gardener shoot's control plane.
const (
	Etcd      = "etcd"
	APIServer = "kube-apiserver"
)

// Kill ends a component of the control plane with sig, SIGKILL for a crash
// or SIGTERM for a shutdown, and returns once it has exited. Revive starts
// it again.
func (c *Cluster) Kill(name string, sig syscall.Signal) error {
	p, err := c.component(name)
	if err != nil {
		return err
	}
	if p.exited() {
		return fmt.Errorf("%s is not running", name)
	}
	// What Revive runs again: the process's own command line and
	// environment, as a supervisor such as the kubelet of a static Pod
	// would start it.
	proc, err := procfs.NewProc(p.proc.Pid)
	if err != nil {
		return err
	}
	if p.argv, err = proc.CmdLine(); err != nil {
		return err
	}
	if p.env, err = proc.Environ(); err != nil {
		return err
	}
	_ = p.proc.Signal(syscall.SIGCONT) // a frozen process handles no signal but SIGKILL
	if err := p.proc.Signal(sig); err != nil {
		return fmt.Errorf("signal %s to %s: %w", sig, name, err)
	}
	// kube-apiserver drains its requests on SIGTERM, each bounded by its
	// --request-timeout (60 s by default).
	grace := 2 * stopGrace
	if sig != syscall.SIGKILL {
		grace = 90 * time.Second
	}
	if p.waitExited(grace) {
		return nil
	}
	// Leave it down all the same, so that Revive can start it.
	err = fmt.Errorf("%s has not exited within %s of %s", name, grace, sig)
	if sig != syscall.SIGKILL {
		_ = p.proc.Signal(syscall.SIGKILL)
		if p.waitExited(2 * stopGrace) {
			return err
		}
	}
	return errors.Join(err, fmt.Errorf("%s has not exited after SIGKILL either", name))
}

// waitExited reports whether the component exited within timeout.
func (p *planeComponent) waitExited(timeout time.Duration) bool {
	return poll.Until(context.Background(), p.name+" to exit", func(context.Context) error {
		if !p.exited() {
			return errors.New("it runs")
		}
		return nil
	}, poll.Timeout(timeout)) == nil
}

// Down reports whether Kill ended the component and Revive has not started
// it again.
func (c *Cluster) Down(name string) bool {
	p, err := c.component(name)
	return err == nil && p.argv != nil && p.exited()
}

// Revive starts a component that Kill ended with the command line and
// environment it ran with, and waits until kube-apiserver is ready again.
// Its output goes to <name>.<n>.log beside the first log.
func (c *Cluster) Revive(ctx context.Context, name string) error {
	p, err := c.component(name)
	if err != nil {
		return err
	}
	if p.argv == nil || !p.exited() {
		return fmt.Errorf("%s was not killed", name)
	}
	p.starts++
	child, err := process.Start(process.Options{
		Name: name, Path: p.argv[0], Args: p.argv[1:], Env: p.env,
		LogPath: strings.TrimSuffix(p.logPath, ".log") + "." + strconv.Itoa(p.starts) + ".log",
	})
	if err != nil {
		return err
	}
	p.child = child
	if p.proc, err = os.FindProcess(child.PID()); err != nil {
		return err
	}
	p.argv, p.env = nil, nil
	return c.waitReadyz(ctx)
}

// Freeze stops a component with SIGSTOP, as a stalled disk or a full CPU
// stalls etcd, and returns once each of its threads has stopped; the
// returned thaw continues it with SIGCONT.
func (c *Cluster) Freeze(name string) (thaw func() error, err error) {
	p, err := c.component(name)
	if err != nil {
		return nil, err
	}
	if err := p.proc.Signal(syscall.SIGSTOP); err != nil {
		return nil, fmt.Errorf("freeze %s: %w", name, err)
	}
	thaw = func() error { return p.proc.Signal(syscall.SIGCONT) }
	// The kernel stops each thread as it next runs, not at once: return
	// only once every thread is stopped, so that nothing the caller does
	// next can still reach a running one.
	err = poll.Until(context.Background(), "every thread of "+name+" to stop", func(context.Context) error {
		return allThreadsStopped(p.proc.Pid)
	}, poll.Timeout(10*time.Second))
	if err != nil {
		return nil, errors.Join(fmt.Errorf("freeze %s: %w", name, err), thaw())
	}
	return thaw, nil
}

// allThreadsStopped returns nil if every thread of process pid is in the
// stopped state (T in /proc/<pid>/task/<tid>/stat), and otherwise names one
// that is not.
func allThreadsStopped(pid int) error {
	threads, err := procfs.AllThreads(pid)
	if err != nil {
		return err
	}
	if len(threads) == 0 {
		return fmt.Errorf("process %d has no threads", pid)
	}
	for _, th := range threads {
		st, err := th.Stat()
		if err != nil {
			return err
		}
		if st.State != "T" {
			return fmt.Errorf("thread %d is in state %s", st.PID, st.State)
		}
	}
	return nil
}

func (c *Cluster) component(name string) (*planeComponent, error) {
	if c.external {
		return nil, errors.New("the control plane of an existing cluster is not the tests' to break")
	}
	for _, p := range c.plane {
		if p.name == name {
			return p, nil
		}
	}
	return nil, fmt.Errorf("no control-plane component %q", name)
}

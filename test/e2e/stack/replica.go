package stack

import (
	"context"
	"net/http"
	"path/filepath"
	"strconv"
	"sync"
	"syscall"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/kyma-project/kim-snatch/test/process"
)

// Replica is one process of a workload, standing in for one Pod. It keeps
// its name, ports and directories across restarts, as a StatefulSet Pod
// would; what matters here is that a restart is a new process.
type Replica struct {
	// Name is also the name of the Pod object that mirrors it.
	Name string
	// App is the value of app.kubernetes.io/name: snatch-webhook or
	// cabundle-syncer.
	App string
	// WebhookAddr is where a webhook replica serves TLS; empty for syncers.
	WebhookAddr string
	MetricsAddr string
	ProbeAddr   string

	path   string
	args   []string
	extra  []string // after args, so that a repeated flag wins
	env    []string
	logDir string
	client *http.Client

	mu     sync.Mutex
	proc   *process.Process
	starts int
}

// Start starts a new process of the replica.
func (r *Replica) Start() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	name := r.Name
	if r.starts > 0 {
		name += "-" + strconv.Itoa(r.starts)
	}
	p, err := process.Start(process.Options{
		Name: r.Name, Path: r.path, Args: append(append([]string(nil), r.args...), r.extra...), Env: r.env,
		LogPath: filepath.Join(r.logDir, name+".log"),
	})
	if err != nil {
		return err
	}
	r.proc = p
	r.starts++
	return nil
}

// Args are the arguments the replica starts with.
func (r *Replica) Args() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append(append([]string(nil), r.args...), r.extra...)
}

// Process is the current process.
func (r *Replica) Process() *process.Process {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.proc
}

// Running reports whether the current process is alive.
func (r *Replica) Running() bool {
	p := r.Process()
	return p != nil && !p.Exited()
}

// Stop ends the process with SIGTERM, as the kubelet does, and waits for
// it to exit.
func (r *Replica) Stop() {
	if p := r.Process(); p != nil {
		p.Stop(30 * time.Second)
	}
}

// stopAll stops the replicas at once and waits for all of them.
func stopAll(rs []*Replica) {
	var wg sync.WaitGroup
	for _, r := range rs {
		wg.Go(r.Stop)
	}
	wg.Wait()
}

// Kill ends the process with SIGKILL and waits for it.
func (r *Replica) Kill() {
	if p := r.Process(); p != nil {
		_ = p.Signal(syscall.SIGKILL)
		<-p.Done()
	}
}

// Ready reports whether /readyz answers 200.
func (r *Replica) Ready(ctx context.Context) bool {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+r.ProbeAddr+"/readyz", nil)
	if err != nil {
		return false
	}
	resp, err := r.client.Do(req)
	if err != nil {
		return false
	}
	_ = resp.Body.Close()
	return resp.StatusCode == http.StatusOK
}

// WaitReady waits until /readyz answers 200, or the process exits.
func (r *Replica) WaitReady(ctx context.Context, timeout time.Duration) error {
	err := wait.PollUntilContextTimeout(ctx, 50*time.Millisecond, timeout, true, func(ctx context.Context) (bool, error) {
		if !r.Running() {
			return false, errorf("%s exited; last log lines:\n%s", r.Name, r.Process().LogTail(20))
		}
		return r.Ready(ctx), nil
	})
	if err != nil {
		return errorf("%s not ready within %s: %w", r.Name, timeout, err)
	}
	return nil
}

// Metric returns the value of one series of the replica's /metrics, e.g.
// ("cabundle_syncer_is_leader", "").
func (r *Replica) Metric(name, labels string) (float64, error) {
	return process.Metric(r.client, "http://"+r.MetricsAddr+"/metrics", name, labels)
}

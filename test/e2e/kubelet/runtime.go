package kubelet

import (
	"context"
	"errors"
	"os/exec"
	"path"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/kyma-project/kim-snatch/test/process"
)

// Runtime starts containers of one image: it stands in for the container
// runtime and the image together.
type Runtime interface {
	// Start starts c and returns once it runs; the container's readiness
	// is the kubelet's to probe. ctx ends when the Kubelet stops; Stop on
	// the returned Running is how a container is ended.
	Start(ctx context.Context, c *Container) (Running, error)
}

// Running is one started container.
type Running interface {
	// Stop ends the container as the kubelet does: SIGTERM, then SIGKILL
	// if it has not exited within grace. It returns once the container has
	// exited and is safe to call more than once.
	Stop(grace time.Duration)
	// Done is closed once the container has exited, on its own or by Stop.
	Done() <-chan struct{}
	// ExitCode is the container's exit code, valid once Done is closed:
	// 128 + the signal's number when a signal ended it, as a container
	// runtime reports it.
	ExitCode() int
}

// ImageName is the name a Runtime is registered under for image: the
// last path element of the reference without tag or digest, e.g.
// "snatch-webhook" for
// europe-docker.pkg.dev/kyma-project/prod/snatch-webhook:0.0.0-unreleased.
func ImageName(image string) string {
	image, _, _ = strings.Cut(image, "@")
	name := path.Base(image)
	name, _, _ = strings.Cut(name, ":")
	return name
}

// Binary returns a Runtime that runs the executable at path, built for
// example by test/process.Build, as a child process (test/process.Start).
// Its arguments are the container's command after the first element (the
// image's entrypoint, which path replaces) and its args, as Container
// rewrote them, then --kubeconfig=<Container.Kubeconfig> when the Pod's
// ServiceAccount token is mounted and the arguments do not name a
// kubeconfig already, then extraArgs, where a repeated flag wins. The
// environment is the test process's, then Container.Env, with
// KUBERNETES_SERVICE_HOST and KUBERNETES_SERVICE_PORT emptied, so that a
// child never takes the environment of a Pod the tests themselves may
// run in for its own. Output goes to Container.LogPath.
func Binary(path string, extraArgs ...string) Runtime {
	return &binary{path: path, extra: slices.Clone(extraArgs)}
}

type binary struct {
	path  string
	extra []string
}

func (b *binary) Start(_ context.Context, c *Container) (Running, error) {
	var args []string
	if len(c.Command) > 1 {
		args = append(args, c.Command[1:]...)
	}
	args = append(args, c.Args...)
	if c.Kubeconfig != "" && !hasFlag(args, "kubeconfig") {
		args = append(args, "--kubeconfig="+c.Kubeconfig)
	}
	args = append(args, b.extra...)
	env := append(slices.Clone(c.Env), "KUBERNETES_SERVICE_HOST=", "KUBERNETES_SERVICE_PORT=")
	p, err := process.Start(process.Options{
		Name:    c.Pod.Namespace + "/" + c.Pod.Name + "/" + c.Spec.Name,
		Path:    b.path,
		Args:    args,
		Env:     env,
		LogPath: c.LogPath,
	})
	if err != nil {
		return nil, err
	}
	return &processRunning{p: p}, nil
}

// hasFlag reports whether args set flag name, as --name=... or -name=...
// or as --name followed by its value.
func hasFlag(args []string, name string) bool {
	for _, a := range args {
		a = strings.TrimPrefix(strings.TrimPrefix(a, "-"), "-")
		if a == name || strings.HasPrefix(a, name+"=") {
			return true
		}
	}
	return false
}

type processRunning struct{ p *process.Process }

func (r *processRunning) Stop(grace time.Duration) { r.p.Stop(grace) }
func (r *processRunning) Done() <-chan struct{}    { return r.p.Done() }

func (r *processRunning) ExitCode() int {
	var exit *exec.ExitError
	switch err := r.p.WaitErr(); {
	case err == nil:
		return 0
	case errors.As(err, &exit):
		if ws, ok := exit.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			return 128 + int(ws.Signal())
		}
		return exit.ExitCode()
	default:
		return 128 + int(syscall.SIGKILL)
	}
}

// Func returns a Runtime that calls start for every container, for a
// stand-in that runs in the test process. start gets the container with
// its ports, volume directories and ServiceAccount client resolved; see
// Container, and InProcess for a Running to return.
func Func(start func(ctx context.Context, c *Container) (Running, error)) Runtime {
	return funcRuntime(start)
}

type funcRuntime func(ctx context.Context, c *Container) (Running, error)

func (f funcRuntime) Start(ctx context.Context, c *Container) (Running, error) { return f(ctx, c) }

// InProcess is a Running for a stand-in in the test process.
type InProcess struct {
	stop func(grace time.Duration) int
	once sync.Once
	done chan struct{}
	code int
}

// NewInProcess returns a running container that stop ends: it is called
// once, with the grace period, and returns the exit code.
func NewInProcess(stop func(grace time.Duration) int) *InProcess {
	return &InProcess{stop: stop, done: make(chan struct{})}
}

// Stop calls the stop function, unless the container has exited already.
func (p *InProcess) Stop(grace time.Duration) {
	p.once.Do(func() {
		p.code = p.stop(grace)
		close(p.done)
	})
	<-p.done
}

// Exit records that the stand-in ended by itself with code, as a process
// that exits; the kubelet then restarts it as the Pod's restartPolicy
// says. The stop function is not called.
func (p *InProcess) Exit(code int) {
	p.once.Do(func() {
		p.code = code
		close(p.done)
	})
}

func (p *InProcess) Done() <-chan struct{} { return p.done }

func (p *InProcess) ExitCode() int { <-p.done; return p.code }

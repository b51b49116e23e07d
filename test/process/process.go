package process

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"time"
)

// Options describe one child process: Name identifies it in errors and
// logs ("webhook-1"), Env is added to the parent's environment, and LogPath
// receives stdout and stderr.
type Options struct {
	Name, Path string
	Args, Env  []string
	LogPath    string
}

// Process is a running child. Its methods are safe for concurrent use.
type Process struct {
	Name    string
	LogPath string

	cmd     *exec.Cmd
	done    chan struct{}
	waitErr error
}

// Start starts the process in a process group of its own. The kernel
// kills it with SIGKILL if the starting process dies.
func Start(o Options) (*Process, error) {
	logFile, err := os.Create(o.LogPath)
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(o.Path, o.Args...)
	cmd.Env = append(os.Environ(), o.Env...)
	cmd.Stdout, cmd.Stderr = logFile, logFile
	// Its own process group keeps a terminal's Ctrl-C away from it: the
	// starting process decides when and how it stops.
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL, Setpgid: true}
	if err := cmd.Start(); err != nil {
		_ = logFile.Close()
		return nil, fmt.Errorf("start %s: %w", o.Name, err)
	}
	p := &Process{Name: o.Name, LogPath: o.LogPath, cmd: cmd, done: make(chan struct{})}
	go func() {
		p.waitErr = cmd.Wait()
		_ = logFile.Close()
		close(p.done)
	}()
	return p, nil
}

// PID is the process id.
func (p *Process) PID() int { return p.cmd.Process.Pid }

// Signal sends sig. A process that has exited is not an error.
func (p *Process) Signal(sig syscall.Signal) error {
	if p.Exited() {
		return nil
	}
	if err := p.cmd.Process.Signal(sig); err != nil && !errors.Is(err, os.ErrProcessDone) {
		return fmt.Errorf("signal %s to %s: %w", sig, p.Name, err)
	}
	return nil
}

// Done is closed when the process has exited.
func (p *Process) Done() <-chan struct{} { return p.done }

// Exited reports whether the process has exited.
func (p *Process) Exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// Wait waits up to timeout for the process to exit and returns its exit
// code (-1 when a signal ended it).
func (p *Process) Wait(timeout time.Duration) (int, error) {
	select {
	case <-p.done:
		return p.cmd.ProcessState.ExitCode(), nil
	case <-time.After(timeout):
		return 0, fmt.Errorf("%s did not exit within %s", p.Name, timeout)
	}
}

// WaitErr is what waiting for the process returned; valid after Done.
func (p *Process) WaitErr() error {
	<-p.done
	return p.waitErr
}

// Stop ends the process: SIGCONT (in case a test stopped it), SIGTERM,
// and SIGKILL if it has not exited within grace. It returns once the
// process is gone.
func (p *Process) Stop(grace time.Duration) {
	if p.Exited() {
		return
	}
	_ = p.cmd.Process.Signal(syscall.SIGCONT)
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	if _, err := p.Wait(grace); err != nil {
		_ = p.cmd.Process.Kill()
		<-p.done
	}
}

// Log returns everything the process wrote so far.
func (p *Process) Log() string {
	b, _ := os.ReadFile(p.LogPath)
	return string(b)
}

// LogTail returns the last n lines of the log.
func (p *Process) LogTail(n int) string {
	all := strings.Split(strings.TrimRight(p.Log(), "\n"), "\n")
	return strings.Join(all[max(0, len(all)-n):], "\n")
}

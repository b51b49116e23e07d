package framework

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"syscall"
	"time"
)

// process is one control plane component running as a child process.
type process struct {
	name    string
	cmd     *exec.Cmd
	logPath string
	logFile *os.File

	done     chan struct{}
	waitErr  error
	stopOnce sync.Once
}

// startProcess starts path with args, its output going to dir/<name>.log.
//
// Pdeathsig makes the kernel SIGKILL the child when the thread that started
// it exits. Go only ends a thread when a goroutine locked to it returns
// without unlocking, which nothing here does, so in practice the child dies
// exactly when this process dies: on a failed test, a test timeout, Ctrl-C or
// SIGKILL. Setpgid keeps a terminal's Ctrl-C away from the children, so that
// Stop, not the terminal, decides the order in which they end.
func startProcess(name, path string, args []string, dir string) (*process, error) {
	logPath := filepath.Join(dir, name+".log")
	logFile, err := os.Create(logPath)
	if err != nil {
		return nil, fmt.Errorf("create log file for %s: %w", name, err)
	}
	cmd := exec.Command(path, args...)
	cmd.Dir = dir
	cmd.Stdout = logFile
	cmd.Stderr = logFile
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL, Setpgid: true}
	if err := cmd.Start(); err != nil {
		_ = logFile.Close()
		return nil, fmt.Errorf("start %s: %w", name, err)
	}
	p := &process{name: name, cmd: cmd, logPath: logPath, logFile: logFile, done: make(chan struct{})}
	go func() {
		p.waitErr = cmd.Wait()
		_ = logFile.Close()
		close(p.done)
	}()
	return p, nil
}

// pid returns the process ID of the component.
func (p *process) pid() int { return p.cmd.Process.Pid }

// exited reports whether the process has ended, and how.
func (p *process) exited() (bool, error) {
	select {
	case <-p.done:
		return true, p.waitErr
	default:
		return false, nil
	}
}

// stop sends SIGTERM, waits up to grace for the process to end, then sends
// SIGKILL. It returns once the process has been reaped.
func (p *process) stop(grace time.Duration) {
	p.stopOnce.Do(func() {
		if done, _ := p.exited(); done {
			return
		}
		_ = p.cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-p.done:
			return
		case <-time.After(grace):
		}
		_ = p.cmd.Process.Kill()
		<-p.done
	})
}

// logTail returns the last lines of a component's log, for error messages.
func logTail(logPath string) string {
	data, err := os.ReadFile(logPath)
	if err != nil {
		return fmt.Sprintf("(no log: %v)", err)
	}
	const max = 4096
	if len(data) > max {
		data = data[len(data)-max:]
		if i := bytes.IndexByte(data, '\n'); i >= 0 {
			data = data[i+1:]
		}
	}
	return string(data)
}

// errExited describes a component that ended while it should be running.
func (p *process) errExited() error {
	_, err := p.exited()
	if err == nil {
		err = errors.New("exit status 0")
	}
	return fmt.Errorf("%s exited: %w; last log lines:\n%s", p.name, err, logTail(p.logPath))
}

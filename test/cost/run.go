package cost

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"sync"
	"syscall"
	"time"
)

// Options say what Run runs and where its output goes.
type Options struct {
	// Args is the command and its arguments; its standard output is
	// the event stream of `go test -json`.
	Args     []string
	Interval time.Duration
	// Stdout gets the output of the tests, Stderr the command's
	// standard error and the sampler's complaints.
	Stdout, Stderr io.Writer
	// Signals are forwarded to the command's process group.
	Signals <-chan os.Signal
	Sampler *Sampler
}

// Outcome is what Run saw.
type Outcome struct {
	Events    []Event
	Recording *Recording
	// ExitCode is the command's, 128 plus the signal's number when a
	// signal ended it.
	ExitCode int
}

// Run runs the command with its standard input closed, samples the machine
// until it has exited, and returns its events and samples. The first
// sample is taken before the command starts and the last after it ends,
// so the recording covers every event.
func Run(o Options) (Outcome, error) {
	if len(o.Args) == 0 {
		return Outcome{}, errors.New("no command to run")
	}
	rec := &Recording{}
	first, err := o.Sampler.Sample()
	if err != nil {
		return Outcome{}, err
	}
	rec.Add(first)
	cmd := exec.Command(o.Args[0], o.Args[1:]...)
	cmd.Stderr = o.Stderr
	// A group of its own: go test does not pass a signal on to the test
	// binaries, so a signal for the run goes to the whole group, as a
	// terminal's would, and one from the terminal reaches it only once,
	// through forward.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return Outcome{}, fmt.Errorf("connect to the output of %s: %w", o.Args[0], err)
	}
	if err := cmd.Start(); err != nil {
		return Outcome{}, fmt.Errorf("start %s: %w", o.Args[0], err)
	}
	stopForwarding := forward(o.Signals, cmd.Process)
	defer stopForwarding()
	ctx, stopSampling := context.WithCancel(context.Background())
	var sampling sync.WaitGroup
	sampling.Go(func() { o.Sampler.Record(ctx, o.Interval, rec, o.Stderr) })

	events, readErr := ReadEvents(stdout, o.Stdout, time.Now)
	if readErr != nil {
		// Drain the rest, so that the command does not block writing.
		_, _ = io.Copy(io.Discard, stdout)
	}
	waitErr := cmd.Wait()
	stopSampling()
	sampling.Wait()
	o.Sampler.AddTo(rec, o.Stderr)

	code, err := exitCode(cmd, waitErr)
	return Outcome{Events: events, Recording: rec, ExitCode: code}, errors.Join(readErr, err)
}

// forward sends each signal to the process group p leads until the
// returned function is called.
func forward(signals <-chan os.Signal, p *os.Process) func() {
	done := make(chan struct{})
	go func() {
		for {
			select {
			case <-done:
				return
			case sig := <-signals:
				if s, ok := sig.(syscall.Signal); ok {
					_ = syscall.Kill(-p.Pid, s) // the group may have exited meanwhile
				}
			}
		}
	}()
	return func() { close(done) }
}

// exitCode is the command's exit code; an error only when it did not run
// to an exit.
func exitCode(cmd *exec.Cmd, waitErr error) (int, error) {
	var exit *exec.ExitError
	if waitErr != nil && !errors.As(waitErr, &exit) {
		return 0, fmt.Errorf("wait for %s: %w", cmd.Path, waitErr)
	}
	if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return 128 + int(ws.Signal()), nil
	}
	return cmd.ProcessState.ExitCode(), nil
}

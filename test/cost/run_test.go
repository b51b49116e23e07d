package cost

import (
	"bytes"
	"os"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/prometheus/procfs"
)

// lockedBuffer is a Buffer that tells when a line holding a word arrives.
type lockedBuffer struct {
	mu    sync.Mutex
	b     bytes.Buffer
	word  string
	ready chan struct{}
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.word != "" && bytes.Contains(p, []byte(l.word)) {
		close(l.ready)
		l.word = ""
	}
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

func runShell(t *testing.T, script string, stdout *lockedBuffer, signals <-chan os.Signal) (Outcome, string) {
	t.Helper()
	sampler, err := NewSampler(procfs.DefaultMountPoint, time.Now)
	if err != nil {
		t.Fatal(err)
	}
	var stderr lockedBuffer
	out, err := Run(Options{Args: []string{"sh", "-c", script}, Interval: 10 * time.Millisecond,
		Stdout: stdout, Stderr: &stderr, Signals: signals, Sampler: sampler})
	if err != nil {
		t.Fatal(err)
	}
	return out, stderr.String()
}

func TestRunPassesTheOutputAndTheExitCodeOfTheCommand(t *testing.T) {
	var stdout lockedBuffer
	script := `printf '%s\n' '{"Action":"output","Package":"p","Output":"hello\n"}' plain; echo oops >&2; sleep 0.1; exit 3`
	out, stderr := runShell(t, script, &stdout, nil)
	if out.ExitCode != 3 {
		t.Errorf("exit code %d, want 3", out.ExitCode)
	}
	if stdout.String() != "hello\nplain\n" || stderr != "oops\n" {
		t.Errorf("stdout %q and stderr %q, want %q and %q", stdout.String(), stderr, "hello\nplain\n", "oops\n")
	}
	if len(out.Events) != 1 || out.Events[0].Output != "hello\n" {
		t.Fatalf("events %+v, want the one output event", out.Events)
	}
	rec := out.Recording
	if !rec.End.After(rec.Start) || rec.CPUs < 1 || len(rec.Machine) == 0 {
		t.Errorf("recording from %v to %v of %d CPUs with %d segments, want one over the run", rec.Start, rec.End, rec.CPUs, len(rec.Machine))
	}
	if !rec.Start.Before(out.Events[0].Time) || !rec.End.After(out.Events[0].Time) {
		t.Errorf("the recording from %v to %v does not cover the event at %v", rec.Start, rec.End, out.Events[0].Time)
	}
}

func TestRunForwardsSignalsToTheCommand(t *testing.T) {
	stdout := lockedBuffer{word: "ready", ready: make(chan struct{})}
	signals := make(chan os.Signal, 1)
	go func() {
		<-stdout.ready
		signals <- syscall.SIGTERM
	}()
	out, _ := runShell(t, `trap 'exit 7' TERM; echo ready; while :; do sleep 0.05; done`, &stdout, signals)
	if out.ExitCode != 7 {
		t.Errorf("exit code %d, want 7, the trap's", out.ExitCode)
	}
}

func TestRunGivesACommandEndedBySignalTheShellsExitCode(t *testing.T) {
	var stdout lockedBuffer
	out, _ := runShell(t, `kill -KILL $$`, &stdout, nil)
	if want := 128 + int(syscall.SIGKILL); out.ExitCode != want {
		t.Errorf("exit code %d, want %d", out.ExitCode, want)
	}
}

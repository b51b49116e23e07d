package main

import (
	"bufio"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// zombieChildren lists the children of pid that have exited and were not
// reaped.
func zombieChildren(t *testing.T, pid int) []int {
	t.Helper()
	stats, _ := filepath.Glob("/proc/[0-9]*/stat")
	var out []int
	for _, s := range stats {
		data, err := os.ReadFile(s)
		if err != nil {
			continue // exited meanwhile
		}
		// pid (comm) state ppid ...; comm may hold spaces.
		rest := string(data[strings.LastIndexByte(string(data), ')')+2:])
		f := strings.Fields(rest)
		if len(f) > 1 && f[0] == "Z" && f[1] == strconv.Itoa(pid) {
			n, _ := strconv.Atoi(filepath.Base(filepath.Dir(s)))
			out = append(out, n)
		}
	}
	return out
}

// runMainEnv makes the test binary run main, so that the tests run the
// pause program without building it.
const runMainEnv = "PAUSE_TEST_RUN_MAIN"

func TestMain(m *testing.M) {
	if os.Getenv(runMainEnv) == "1" {
		main()
		return
	}
	os.Exit(m.Run())
}

func TestPauseExitsZeroOnSignalAndReapsItsChildren(t *testing.T) {
	if _, err := os.Stat("/proc/self/stat"); err != nil {
		t.Skip("needs Linux /proc")
	}
	tests := []struct {
		name   string
		child  string // shell command run in the background before exec
		signal syscall.Signal
	}{
		{name: "sigterm_exits_0", signal: syscall.SIGTERM},
		{name: "sigint_exits_0", signal: syscall.SIGINT},
		// The shell starts a child and then becomes pause, which inherits
		// the child and must reap it when it exits.
		{name: "reaps_a_child_that_exits_later", child: "sleep 0.5", signal: syscall.SIGTERM},
		{name: "reaps_a_child_that_exits_at_once", child: "true", signal: syscall.SIGTERM},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cmd := startPause(t, tt.child)
			if tt.child != "" {
				waitReaped(t, cmd)
			} else {
				time.Sleep(300 * time.Millisecond) // let it install its handlers
			}
			stopPause(t, cmd, tt.signal)
		})
	}
}

// startPause starts a shell that runs child in the background, if any, and
// then becomes pause: this test binary, running main.
func startPause(t *testing.T, child string) *exec.Cmd {
	t.Helper()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	script := `exec "$0"`
	if child != "" {
		script = child + ` & exec "$0"`
	}
	cmd := exec.Command("sh", "-c", script, self)
	cmd.Env = append(os.Environ(), runMainEnv+"=1")
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// Not PID 1, pause warns first: then it is running main.
	if line, err := bufio.NewReader(stderr).ReadString('\n'); !strings.Contains(line, "not PID 1") {
		cmd.Process.Kill()
		t.Fatalf("pause wrote %q (%v), want its warning", line, err)
	}
	return cmd
}

// waitReaped waits until pause has reaped its exited child: the child is
// gone for good once its zombie is reaped.
func waitReaped(t *testing.T, cmd *exec.Cmd) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	time.Sleep(time.Second)
	for z := zombieChildren(t, cmd.Process.Pid); len(z) > 0; z = zombieChildren(t, cmd.Process.Pid) {
		if time.Now().After(deadline) {
			cmd.Process.Kill()
			t.Fatalf("zombie children %v of pause were not reaped", z)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// stopPause sends sig to pause and wants it to exit 0.
func stopPause(t *testing.T, cmd *exec.Cmd, sig syscall.Signal) {
	t.Helper()
	if err := cmd.Process.Signal(sig); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("pause after %s: %v, want exit 0", sig, err)
		}
	case <-time.After(10 * time.Second):
		cmd.Process.Kill()
		t.Fatalf("pause still running 10s after %s", sig)
	}
}

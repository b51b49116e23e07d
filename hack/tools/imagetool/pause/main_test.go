package main

import (
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

func TestPause(t *testing.T) {
	if _, err := os.Stat("/proc/self/stat"); err != nil {
		t.Skip("needs Linux /proc")
	}
	bin := filepath.Join(t.TempDir(), "pause")
	build := exec.Command("go", "build", "-o", bin, ".")
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
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
			script := `exec "$0"`
			if tt.child != "" {
				script = tt.child + ` & exec "$0"`
			}
			cmd := exec.Command("sh", "-c", script, bin)
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			pid := cmd.Process.Pid
			if tt.child != "" {
				// The child is gone for good once its zombie is reaped.
				deadline := time.Now().Add(10 * time.Second)
				time.Sleep(time.Second)
				for z := zombieChildren(t, pid); len(z) > 0; z = zombieChildren(t, pid) {
					if time.Now().After(deadline) {
						cmd.Process.Kill()
						t.Fatalf("zombie children %v of pause were not reaped", z)
					}
					time.Sleep(50 * time.Millisecond)
				}
			} else {
				time.Sleep(300 * time.Millisecond) // let it install its handlers
			}
			if err := cmd.Process.Signal(tt.signal); err != nil {
				t.Fatal(err)
			}
			done := make(chan error, 1)
			go func() { done <- cmd.Wait() }()
			select {
			case err := <-done:
				if err != nil {
					t.Fatalf("pause after %s: %v, want exit 0", tt.signal, err)
				}
			case <-time.After(10 * time.Second):
				cmd.Process.Kill()
				t.Fatalf("pause still running 10s after %s", tt.signal)
			}
		})
	}
}

package framework

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/kyma-project/kim-snatch/test/framework/poll"
	"github.com/kyma-project/kim-snatch/test/process"
)

// helperPIDFileEnv makes TestHelperHoldsCluster start a cluster, write its
// PIDs to the named file and wait to be killed.
const helperPIDFileEnv = "SNATCH_FRAMEWORK_HELPER_PIDFILE"

func TestStopLeavesNoProcess(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a control plane")
	}
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	c, err := Start(ctx, Options{Scheduler: true, ControllerManager: true})
	if err != nil {
		t.Fatal(err)
	}
	pids := c.PIDs()
	if len(pids) != 4 {
		_ = c.Stop()
		t.Fatalf("started %d processes, want etcd, kube-apiserver, kube-scheduler and kube-controller-manager", len(pids))
	}
	for _, pid := range pids {
		if !alive(pid) {
			_ = c.Stop()
			t.Fatalf("process %d is not running before Stop", pid)
		}
	}
	if err := c.Stop(); err != nil {
		t.Fatal(err)
	}
	for _, pid := range pids {
		if alive(pid) {
			t.Errorf("process %d (%s) survived Stop", pid, cmdline(pid))
		}
	}
	if _, err := os.Stat(c.Dir); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("cluster directory %s still exists after Stop: %v", c.Dir, err)
	}
}

// TestKilledTestLeavesNoProcess runs a copy of this test binary that starts
// a full control plane, SIGKILLs it (no cleanup runs), and checks that the
// kernel ended every component anyway.
func TestKilledTestLeavesNoProcess(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a control plane")
	}
	h := startHelper(t)
	pids := h.waitForCluster(t)
	for _, pid := range pids {
		if !alive(pid) {
			t.Fatalf("process %d is not running before the kill", pid)
		}
	}
	if err := h.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	if err := h.WaitErr(); err == nil {
		t.Fatal("the helper exited cleanly; want it killed")
	}
	err := poll.Until(t.Context(), "every component to end", func(context.Context) error {
		for _, pid := range pids {
			if alive(pid) {
				return fmt.Errorf("process %d runs", pid)
			}
		}
		return nil
	})
	if err != nil {
		t.Log(err)
		for _, pid := range pids {
			if alive(pid) {
				t.Errorf("process %d (%s) survived the SIGKILL of the test that started it", pid, cmdline(pid))
				_ = syscall.Kill(pid, syscall.SIGKILL)
			}
		}
	}
}

// helper is the copy of the test binary that runs TestHelperHoldsCluster,
// a long-running child that the test kills.
type helper struct {
	*process.Process
	pidFile string
}

func startHelper(t *testing.T) *helper {
	dir := t.TempDir()
	h := &helper{pidFile: filepath.Join(dir, "pids")}
	p, err := process.Start(process.Options{
		Name:    "helper",
		Path:    os.Args[0],
		Args:    []string{"-test.run=^TestHelperHoldsCluster$", "-test.v"},
		Env:     []string{helperPIDFileEnv + "=" + h.pidFile},
		LogPath: filepath.Join(dir, "helper.log"),
	})
	if err != nil {
		t.Fatal(err)
	}
	h.Process = p
	return h
}

// waitForCluster returns the PIDs of the four components the helper
// started, once it has written them, and removes its cluster's folder when
// t ends.
func (h *helper) waitForCluster(t *testing.T) []int {
	var pids []int
	var dir string
	err := poll.Until(t.Context(), "the helper to report its cluster", func(context.Context) error {
		if h.Exited() {
			return poll.Stop(fmt.Errorf("helper exited early: %v\n%s", h.WaitErr(), h.Log()))
		}
		data, err := os.ReadFile(h.pidFile)
		if err != nil {
			return err
		}
		dir, pids, err = parsePIDFile(data)
		return err
	}, poll.Timeout(2*time.Minute))
	if err != nil {
		_ = h.Signal(syscall.SIGKILL)
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(dir) })
	if len(pids) != 4 {
		_ = h.Signal(syscall.SIGKILL)
		t.Fatalf("helper started %d processes, want 4", len(pids))
	}
	return pids
}

// TestHelperHoldsCluster is not a test on its own: TestKilledTestLeavesNoProcess
// runs it in a child process.
func TestHelperHoldsCluster(t *testing.T) {
	pidFile := os.Getenv(helperPIDFileEnv)
	if pidFile == "" {
		t.Skip("helper for TestKilledTestLeavesNoProcess")
	}
	c, err := Start(t.Context(), Options{Scheduler: true, ControllerManager: true})
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	b.WriteString(c.Dir + "\n")
	for _, pid := range c.PIDs() {
		fmt.Fprintf(&b, "%d\n", pid)
	}
	tmp := pidFile + ".tmp"
	if err := os.WriteFile(tmp, []byte(b.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, pidFile); err != nil {
		t.Fatal(err)
	}
	time.Sleep(5 * time.Minute) // until the parent kills this process
}

func parsePIDFile(data []byte) (string, []int, error) {
	lines := strings.Fields(string(data))
	if len(lines) < 2 {
		return "", nil, errors.New("short pid file")
	}
	pids := make([]int, 0, len(lines)-1)
	for _, l := range lines[1:] {
		pid, err := strconv.Atoi(l)
		if err != nil {
			return "", nil, err
		}
		pids = append(pids, pid)
	}
	return lines[0], pids, nil
}

// alive reports whether pid names a running process. A zombie counts as
// ended: it runs nothing and only waits for its parent to reap it.
func alive(pid int) bool {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	// The state follows the parenthesised command name.
	i := bytes.LastIndexByte(data, ')')
	return i < 0 || i+2 >= len(data) || data[i+2] != 'Z'
}

func cmdline(pid int) string {
	data, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
	return strings.ReplaceAll(strings.TrimRight(string(data), "\x00"), "\x00", " ")
}

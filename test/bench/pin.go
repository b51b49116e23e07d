package bench

import (
	"errors"
	"fmt"
	"os"
	"runtime"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/kyma-project/kim-snatch/test/process"
)

// CPU pinning. A Linux thread's CPU affinity is inherited by the threads
// and processes it creates, and os/exec forks on the calling thread. So a
// child starts pinned when the goroutine that starts it is locked to its
// thread and that thread is pinned first; every thread of the child then
// inherits the set. The harness itself, the load generator, is pinned by
// setting the affinity of each of its threads: the Go runtime starts new
// threads from existing ones, which pass the set on.

func cpuSet(cpu int) *unix.CPUSet {
	var s unix.CPUSet
	s.Set(cpu)
	return &s
}

// startPinned starts a child whose every thread may run only on cpu.
func startPinned(cpu int, o process.Options) (*process.Process, error) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	var old unix.CPUSet
	if err := unix.SchedGetaffinity(0, &old); err != nil {
		return nil, fmt.Errorf("read the CPU affinity: %w", err)
	}
	if err := unix.SchedSetaffinity(0, cpuSet(cpu)); err != nil {
		return nil, fmt.Errorf("pin to CPU %d: %w", cpu, err)
	}
	p, startErr := process.Start(o)
	// Restore before the thread goes back to the runtime's pool.
	if err := unix.SchedSetaffinity(0, &old); err != nil {
		if p != nil {
			p.Stop(0)
		}
		return nil, fmt.Errorf("restore the CPU affinity: %w", err)
	}
	return p, startErr
}

// pinSelf sets the affinity of every thread of this process to set and
// returns the set it had.
func pinSelf(set *unix.CPUSet) (unix.CPUSet, error) {
	var old unix.CPUSet
	if err := unix.SchedGetaffinity(0, &old); err != nil {
		return old, err
	}
	tasks, err := os.ReadDir("/proc/self/task")
	if err != nil {
		return old, err
	}
	for _, t := range tasks {
		tid, err := strconv.Atoi(t.Name())
		if err != nil {
			continue
		}
		// A thread may have exited since the directory was read.
		if err := unix.SchedSetaffinity(tid, set); err != nil && !errors.Is(err, unix.ESRCH) {
			return old, fmt.Errorf("set the CPU affinity of thread %d: %w", tid, err)
		}
	}
	return old, nil
}

// allowedCPUs reads the CPUs a process may run on, as the kernel reports
// them, e.g. "0" or "0-1".
func allowedCPUs(pid int) string {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return "?"
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "Cpus_allowed_list:"); ok {
			return strings.TrimSpace(v)
		}
	}
	return "?"
}

package process

import (
	"fmt"
	"os"
	"strconv"
	"strings"
)

// RSS reads the resident set size in bytes from /proc/<pid>/status.
func (p *Process) RSS() (int64, error) {
	pid := p.PID()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, err
	}
	_, rest, ok := strings.Cut(string(b), "\nVmRSS:")
	if !ok {
		return 0, fmt.Errorf("no VmRSS: in /proc/%d/status", pid)
	}
	var kb int64
	if _, err := fmt.Sscanf(rest, "%d kB", &kb); err != nil {
		return 0, fmt.Errorf("parse VmRSS: of pid %d: %w", pid, err)
	}
	return kb * 1024, nil
}

// CPUTime returns the user plus system CPU time of pid in seconds, from
// /proc/<pid>/stat, in clock ticks of 100 Hz (USER_HZ on Linux).
func CPUTime(pid int) (float64, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, err
	}
	// The command name may hold spaces; the fields after it start past ")",
	// with state (field 3). utime and stime are fields 14 and 15.
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return 0, fmt.Errorf("unexpected /proc/%d/stat", pid)
	}
	fields := strings.Fields(s[i+1:])
	if len(fields) < 13 {
		return 0, fmt.Errorf("short /proc/%d/stat", pid)
	}
	utime, err1 := strconv.ParseInt(fields[11], 10, 64)
	stime, err2 := strconv.ParseInt(fields[12], 10, 64)
	if err1 != nil || err2 != nil {
		return 0, fmt.Errorf("parse /proc/%d/stat: %v %v", pid, err1, err2)
	}
	return float64(utime+stime) / 100, nil
}

package process

import "github.com/prometheus/procfs"

// RSS returns the resident set size in bytes, VmRSS of /proc/<pid>/status.
func (p *Process) RSS() (int64, error) {
	proc, err := procfs.NewProc(p.PID())
	if err != nil {
		return 0, err
	}
	status, err := proc.NewStatus()
	if err != nil {
		return 0, err
	}
	return int64(status.VmRSS), nil
}

// CPUTime returns the user plus system CPU time of pid in seconds, from
// /proc/<pid>/stat.
func CPUTime(pid int) (float64, error) {
	proc, err := procfs.NewProc(pid)
	if err != nil {
		return 0, err
	}
	stat, err := proc.Stat()
	if err != nil {
		return 0, err
	}
	return stat.CPUTime(), nil
}

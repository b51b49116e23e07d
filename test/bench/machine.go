package bench

import (
	"fmt"
	"os"
	"runtime"
	"strconv"
	"strings"
)

func describeMachine() (Machine, error) {
	m := Machine{CPUs: runtime.NumCPU(), GoVersion: runtime.Version(), OSArch: runtime.GOOS + "/" + runtime.GOARCH}
	if b, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		for _, line := range strings.Split(string(b), "\n") {
			if k, v, ok := strings.Cut(line, ":"); ok && strings.TrimSpace(k) == "model name" {
				m.CPUModel = strings.TrimSpace(v)
				break
			}
		}
	}
	if b, err := os.ReadFile("/proc/sys/kernel/osrelease"); err == nil {
		m.Kernel = strings.TrimSpace(string(b))
	}
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return m, fmt.Errorf("read the load average: %w", err)
	}
	fields := strings.Fields(string(b))
	for i := 0; i < 3 && i < len(fields); i++ {
		if m.LoadAvg[i], err = strconv.ParseFloat(fields[i], 64); err != nil {
			return m, fmt.Errorf("parse /proc/loadavg %q: %w", b, err)
		}
	}
	return m, nil
}

package cost

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/prometheus/procfs"
)

// Sampler reads Samples from a proc file system.
type Sampler struct {
	fs  procfs.FS
	now func() time.Time
	// known is the class of each process the last sample saw, by its
	// comm then: a process keeps its command line until it executes
	// another binary, which changes its comm, so the command line is read
	// only for a new process or after an exec. Reading every command line
	// every second was most of the sampler's own CPU time.
	known map[procKey]classified
}

// classified is a process's class and the comm it was classified under.
type classified struct{ comm, class string }

// NewSampler returns a Sampler of the proc file system mounted at
// mountPoint, procfs.DefaultMountPoint for this machine's.
func NewSampler(mountPoint string, now func() time.Time) (*Sampler, error) {
	fs, err := procfs.NewFS(mountPoint)
	if err != nil {
		return nil, fmt.Errorf("open the proc file system at %s: %w", mountPoint, err)
	}
	return &Sampler{fs: fs, now: now, known: map[procKey]classified{}}, nil
}

// Sample reads the machine's CPU times and every process's. A process that
// exits while it is read is left out: it is gone by the time the sample
// is taken.
func (s *Sampler) Sample() (Sample, error) {
	at := s.now()
	stat, err := s.fs.Stat()
	if err != nil {
		return Sample{}, fmt.Errorf("read the CPU times of the machine: %w", err)
	}
	procs, err := s.fs.AllProcs()
	if err != nil {
		return Sample{}, fmt.Errorf("list the processes: %w", err)
	}
	out := Sample{Time: at, CPUs: len(stat.CPU), Busy: MachineBusy(stat.CPUTotal), Procs: make([]ProcSample, 0, len(procs))}
	known := make(map[procKey]classified, len(procs))
	for _, p := range procs {
		ps, err := p.Stat()
		if err != nil {
			continue
		}
		k := procKey{p.PID, ps.Starttime}
		c, ok := s.known[k]
		if !ok || c.comm != ps.Comm {
			cmdline, err := p.CmdLine()
			if err != nil {
				continue
			}
			c = classified{comm: ps.Comm, class: Classify(cmdline, ps.Comm)}
		}
		known[k] = c
		out.Procs = append(out.Procs, ProcSample{PID: p.PID, Start: ps.Starttime, Class: c.class, CPU: ps.CPUTime()})
	}
	s.known = known
	return out, nil
}

// MachineBusy is the time the CPUs were busy: all but idle and iowait.
// Guest time is left out as the kernel counts it in user time already.
// Steal counts: the machine wanted the CPU then, it did not idle.
func MachineBusy(c procfs.CPUStat) float64 {
	return c.User + c.Nice + c.System + c.IRQ + c.SoftIRQ + c.Steal
}

// Record adds a sample to rec every interval until ctx is done, then
// returns. A sample that fails is reported to errs and skipped: the next
// one covers its interval.
func (s *Sampler) Record(ctx context.Context, interval time.Duration, rec *Recording, errs io.Writer) {
	tick := time.NewTicker(interval)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
			s.AddTo(rec, errs)
		}
	}
}

// AddTo takes one sample and adds it to rec, reporting a failure to errs.
func (s *Sampler) AddTo(rec *Recording, errs io.Writer) {
	sample, err := s.Sample()
	if err != nil {
		fmt.Fprintln(errs, "test-cost: skip a sample:", err)
		return
	}
	rec.Add(sample)
}

package cost

import "time"

// Sample is one reading of /proc.
type Sample struct {
	Time time.Time
	// CPUs is the number of CPUs /proc/stat lists.
	CPUs int
	// Busy is the machine's busy time so far, in CPU-seconds summed over
	// all CPUs (MachineBusy).
	Busy  float64
	Procs []ProcSample
}

// ProcSample is one process in a Sample.
type ProcSample struct {
	PID int
	// Start is the start time in clock ticks since boot: with PID it names
	// the process, as a PID is used again once its process has gone.
	Start uint64
	// Class is what the process is, as Classify tells: it may change
	// when the process executes another binary.
	Class string
	// CPU is its user plus system time so far, in seconds.
	CPU float64
}

// Segment is CPU time used between two samples: by one class of processes,
// or by the whole machine when Class is empty.
type Segment struct {
	Interval
	Class string
	CPU   float64
}

// procKey names a process over its life.
type procKey struct {
	pid   int
	start uint64
}

// sighting is a process's CPU time when a sample last saw it.
type sighting struct {
	time time.Time
	cpu  float64
}

// Recording folds samples, in order of time, into the segments of CPU time
// between them. It keeps only the segments that used CPU and the last
// sighting of each process, so a long run's recording stays small.
type Recording struct {
	CPUs int
	// Start and End are the times of the first and the last sample.
	Start, End time.Time
	Machine    []Segment
	Processes  []Segment

	busy float64
	seen map[procKey]sighting
}

// Add folds the next sample into the recording. A process already running
// at the first sample counts only what it uses after it. A process first
// seen later counts all its CPU time, spread over the interval since the
// sample before, as it started in it. What a process uses between its last
// sample and its exit is lost: it shows as the machine's busy time that no
// class accounts for.
func (r *Recording) Add(s Sample) {
	if r.seen == nil {
		r.CPUs, r.Start, r.End, r.busy = s.CPUs, s.Time, s.Time, s.Busy
		r.seen = make(map[procKey]sighting, len(s.Procs))
		for _, p := range s.Procs {
			r.seen[procKey{p.PID, p.Start}] = sighting{s.Time, p.CPU}
		}
		return
	}
	previous := r.End
	if d := s.Busy - r.busy; d > 0 {
		r.Machine = append(r.Machine, Segment{Interval: Interval{previous, s.Time}, CPU: d})
	}
	for _, p := range s.Procs {
		k := procKey{p.PID, p.Start}
		from, used := previous, p.CPU
		if last, ok := r.seen[k]; ok {
			// A sample that missed the process leaves a gap; the
			// segment spans it.
			from, used = last.time, p.CPU-last.cpu
		}
		if used > 0 {
			r.Processes = append(r.Processes, Segment{Interval: Interval{from, s.Time}, Class: p.Class, CPU: used})
		}
		r.seen[k] = sighting{s.Time, p.CPU}
	}
	r.End, r.busy = s.Time, s.Busy
}

// MachineCPU is the machine's busy CPU-seconds within iv.
func (r *Recording) MachineCPU(iv Interval) float64 {
	total := 0.0
	for _, s := range r.Machine {
		total += s.within(iv)
	}
	return total
}

// ClassCPU is the CPU-seconds each class of processes used within iv.
func (r *Recording) ClassCPU(iv Interval) map[string]float64 {
	out := map[string]float64{}
	for _, s := range r.Processes {
		if c := s.within(iv); c > 0 {
			out[s.Class] += c
		}
	}
	return out
}

// within is the part of the segment's CPU time that falls in iv. Samples
// tell only how much was used between two of them, so the time is taken
// as used evenly: a figure at an instant between two samples is
// interpolated linearly between them.
func (s Segment) within(iv Interval) float64 {
	from, to := latest(s.From, iv.From), earliest(s.To, iv.To)
	if !to.After(from) {
		return 0
	}
	length := s.To.Sub(s.From)
	if length <= 0 {
		return 0
	}
	return s.CPU * float64(to.Sub(from)) / float64(length)
}

func latest(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

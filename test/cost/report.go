package cost

import (
	"sort"
	"time"
)

// SetUpAndTearDown is the test of the row that gives a package's time
// outside its top-level tests: TestMain installing and removing what the
// tests share, and the test binary starting and stopping.
const SetUpAndTearDown = "(set-up and tear-down)"

// topClasses is how many classes a test's row names.
const topClasses = 5

// Report is what one run cost.
type Report struct {
	Command  []string  `json:"command,omitempty"`
	ExitCode int       `json:"exit_code"`
	Started  time.Time `json:"started"`
	Finished time.Time `json:"finished"`
	// IntervalSeconds is how often /proc was sampled.
	IntervalSeconds float64 `json:"interval_seconds"`
	Totals          Totals  `json:"totals"`
	// Tests are the top-level tests and the packages' set-up and
	// tear-down, by CPU-seconds, the most first.
	Tests []TestCost `json:"tests"`
	// Processes are the classes of processes over the whole run, by
	// CPU-seconds, the most first, then ClassNotAttributed.
	Processes []ProcessCost `json:"processes"`
}

// Totals are the whole run's figures, from the first sample to the last.
type Totals struct {
	CPUs        int     `json:"cpus"`
	WallSeconds float64 `json:"wall_seconds"`
	CPUSeconds  float64 `json:"cpu_seconds"`
	CPUMinutes  float64 `json:"cpu_minutes"`
	// UsePercent is the share of the CPUs' time the machine was busy.
	UsePercent float64 `json:"use_percent"`
}

// TestCost is what one top-level test, or one package's set-up and
// tear-down, cost the machine. Tests that run in parallel each count the
// whole machine while they overlap.
type TestCost struct {
	Package     string  `json:"package"`
	Test        string  `json:"test"`
	Result      string  `json:"result"`
	WallSeconds float64 `json:"wall_seconds"`
	// WaitingSeconds is the wall time the CPUs had nothing to do: the
	// wall time minus the CPU-seconds spread over all CPUs.
	WaitingSeconds float64 `json:"waiting_seconds"`
	// CPUSeconds is the machine's busy time meanwhile, summed over all
	// CPUs, whoever used it.
	CPUSeconds float64 `json:"cpu_seconds"`
	// TopProcesses are the classes that used the most of it.
	TopProcesses []ProcessCost `json:"top_processes,omitempty"`
}

// ProcessCost is what one class of processes used.
type ProcessCost struct {
	Process    string  `json:"process"`
	CPUSeconds float64 `json:"cpu_seconds"`
	// Share is the fraction of the machine's busy CPU-seconds over the
	// same time.
	Share float64 `json:"share"`
}

// Compute tells what the run whose events and samples are given cost.
func Compute(events []Event, rec *Recording) Report {
	r := Report{Started: rec.Start, Finished: rec.End, Totals: totals(rec)}
	tests, packages := Spans(events)
	for _, t := range tests {
		r.Tests = append(r.Tests, testCost(rec, t, []Interval{t.Interval}))
	}
	for _, p := range packages {
		var covered []Interval
		for _, t := range tests {
			if t.Package == p.Package {
				covered = append(covered, t.Interval)
			}
		}
		setUp := Span{Package: p.Package, Test: SetUpAndTearDown, Result: p.Result}
		r.Tests = append(r.Tests, testCost(rec, setUp, Uncovered(p.Interval, covered)))
	}
	sort.SliceStable(r.Tests, func(i, j int) bool { return r.Tests[i].CPUSeconds > r.Tests[j].CPUSeconds })
	r.Processes = processCosts(rec, Interval{From: rec.Start, To: rec.End})
	return r
}

func totals(rec *Recording) Totals {
	t := Totals{CPUs: rec.CPUs, WallSeconds: rec.End.Sub(rec.Start).Seconds()}
	t.CPUSeconds = rec.MachineCPU(Interval{From: rec.Start, To: rec.End})
	t.CPUMinutes = t.CPUSeconds / 60
	if t.WallSeconds > 0 && t.CPUs > 0 {
		t.UsePercent = 100 * t.CPUSeconds / (t.WallSeconds * float64(t.CPUs))
	}
	return t
}

// testCost is the cost of a span of the run made of the intervals given.
func testCost(rec *Recording, s Span, intervals []Interval) TestCost {
	c := TestCost{Package: s.Package, Test: s.Test, Result: s.Result}
	byClass := map[string]float64{}
	for _, iv := range intervals {
		c.WallSeconds += iv.Seconds()
		c.CPUSeconds += rec.MachineCPU(iv)
		for class, cpu := range rec.ClassCPU(iv) {
			byClass[class] += cpu
		}
	}
	if rec.CPUs > 0 {
		c.WaitingSeconds = max(0, c.WallSeconds-c.CPUSeconds/float64(rec.CPUs))
	}
	c.TopProcesses = rank(byClass, c.CPUSeconds)
	if len(c.TopProcesses) > topClasses {
		c.TopProcesses = c.TopProcesses[:topClasses]
	}
	return c
}

// processCosts are the classes' CPU-seconds within iv, the most first,
// then what no class accounts for.
func processCosts(rec *Recording, iv Interval) []ProcessCost {
	byClass := rec.ClassCPU(iv)
	busy := rec.MachineCPU(iv)
	out := rank(byClass, busy)
	attributed := 0.0
	for _, c := range byClass {
		attributed += c
	}
	rest := ProcessCost{Process: ClassNotAttributed, CPUSeconds: busy - attributed}
	if busy > 0 {
		rest.Share = rest.CPUSeconds / busy
	}
	return append(out, rest)
}

// rank turns CPU-seconds by class into costs, the most first, each with its
// share of busy.
func rank(byClass map[string]float64, busy float64) []ProcessCost {
	out := make([]ProcessCost, 0, len(byClass))
	for class, cpu := range byClass {
		c := ProcessCost{Process: class, CPUSeconds: cpu}
		if busy > 0 {
			c.Share = cpu / busy
		}
		out = append(out, c)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].CPUSeconds != out[j].CPUSeconds {
			return out[i].CPUSeconds > out[j].CPUSeconds
		}
		return out[i].Process < out[j].Process
	})
	return out
}

package cost

import (
	"math"
	"testing"
)

// sample is a Sample of a machine with 2 CPUs at seconds.
func sample(seconds, busy float64, procs ...ProcSample) Sample {
	return Sample{Time: at(seconds), CPUs: 2, Busy: busy, Procs: procs}
}

func proc(pid int, start uint64, class string, cpu float64) ProcSample {
	return ProcSample{PID: pid, Start: start, Class: class, CPU: cpu}
}

func record(samples ...Sample) *Recording {
	rec := &Recording{}
	for _, s := range samples {
		rec.Add(s)
	}
	return rec
}

func near(a, b float64) bool { return math.Abs(a-b) < 1e-9 }

func TestRecording(t *testing.T) {
	whole := Interval{From: at(0), To: at(20)}
	cases := []struct {
		name        string
		samples     []Sample
		window      Interval
		wantMachine float64
		wantClasses map[string]float64
	}{
		{
			name:        "process_running_at_the_first_sample_counts_only_what_it_uses_after",
			samples:     []Sample{sample(0, 0, proc(1, 10, "etcd", 100)), sample(10, 8, proc(1, 10, "etcd", 104))},
			window:      whole,
			wantMachine: 8, wantClasses: map[string]float64{"etcd": 4},
		},
		{
			name:        "process_started_mid_run_counts_all_its_cpu",
			samples:     []Sample{sample(0, 0), sample(10, 5, proc(7, 500, "kubectl", 2)), sample(20, 9, proc(7, 500, "kubectl", 3))},
			window:      whole,
			wantMachine: 9, wantClasses: map[string]float64{"kubectl": 3},
		},
		{
			name:        "process_gone_keeps_what_it_used_until_its_last_sample",
			samples:     []Sample{sample(0, 0, proc(1, 10, "etcd", 1)), sample(10, 6, proc(1, 10, "etcd", 3)), sample(20, 10)},
			window:      whole,
			wantMachine: 10, wantClasses: map[string]float64{"etcd": 2},
		},
		{
			name: "pid_used_again_by_a_new_process_counts_both",
			samples: []Sample{sample(0, 0, proc(5, 100, "etcd", 1)), sample(10, 5, proc(5, 100, "etcd", 4)),
				sample(20, 10, proc(5, 900, "kubectl", 2))},
			window:      whole,
			wantMachine: 10, wantClasses: map[string]float64{"etcd": 3, "kubectl": 2},
		},
		{
			name:        "process_missed_by_a_sample_is_not_counted_twice",
			samples:     []Sample{sample(0, 0, proc(1, 10, "etcd", 1)), sample(10, 4), sample(20, 8, proc(1, 10, "etcd", 5))},
			window:      whole,
			wantMachine: 8, wantClasses: map[string]float64{"etcd": 4},
		},
		{
			name: "process_that_executes_another_binary_counts_each_interval_to_its_class_then",
			samples: []Sample{sample(0, 0), sample(10, 3, proc(3, 70, ClassGoToolchain, 1)),
				sample(20, 9, proc(3, 70, ClassTestBinaries, 7))},
			window:      whole,
			wantMachine: 9, wantClasses: map[string]float64{ClassGoToolchain: 1, ClassTestBinaries: 6},
		},
		{
			name:        "window_inside_an_interval_gets_its_linear_part",
			samples:     []Sample{sample(0, 0, proc(1, 10, "etcd", 10)), sample(10, 10, proc(1, 10, "etcd", 20))},
			window:      Interval{From: at(2.5), To: at(5)},
			wantMachine: 2.5, wantClasses: map[string]float64{"etcd": 2.5},
		},
		{
			name:        "window_over_two_intervals_adds_their_parts",
			samples:     []Sample{sample(0, 0), sample(10, 10), sample(20, 30)},
			window:      Interval{From: at(5), To: at(15)},
			wantMachine: 15, wantClasses: map[string]float64{},
		},
		{
			name:        "window_outside_the_recording_gets_nothing",
			samples:     []Sample{sample(0, 0, proc(1, 10, "etcd", 1)), sample(10, 10, proc(1, 10, "etcd", 5))},
			window:      Interval{From: at(30), To: at(40)},
			wantMachine: 0, wantClasses: map[string]float64{},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			rec := record(tc.samples...)
			if got := rec.MachineCPU(tc.window); !near(got, tc.wantMachine) {
				t.Errorf("machine %v CPU-s, want %v", got, tc.wantMachine)
			}
			got := rec.ClassCPU(tc.window)
			if len(got) != len(tc.wantClasses) {
				t.Fatalf("classes %v, want %v", got, tc.wantClasses)
			}
			for class, want := range tc.wantClasses {
				if !near(got[class], want) {
					t.Errorf("%s %v CPU-s, want %v", class, got[class], want)
				}
			}
		})
	}
}

func TestRecordingSpansFirstToLastSample(t *testing.T) {
	rec := record(sample(3, 1), sample(4, 2), sample(9, 5))
	if rec.CPUs != 2 || !rec.Start.Equal(at(3)) || !rec.End.Equal(at(9)) {
		t.Errorf("CPUs %d from %v to %v, want 2 from %v to %v", rec.CPUs, rec.Start, rec.End, at(3), at(9))
	}
}

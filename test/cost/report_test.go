package cost

import "testing"

// A run on 2 CPUs sampled every 10 s. The machine is busy for 10, 20, 10
// and 4 CPU-seconds in the four intervals. etcd runs from before the run
// and uses 5, 5, 2 and 0 CPU-seconds; the test binary starts in the first
// interval, has used 3 by the second sample, then uses 10 and 5 and exits
// in the last interval. Package p starts at 5 s, runs TestA from 5 to 15 s
// and TestB from 15 to 25 s, and ends at 35 s; package q, without tests,
// runs from 36 to 38 s.
func costedRun() ([]Event, *Recording) {
	etcd := func(cpu float64) ProcSample { return proc(1, 10, "etcd", cpu) }
	suite := func(cpu float64) ProcSample { return proc(2, 50, ClassTestBinaries, cpu) }
	rec := record(
		sample(0, 0, etcd(100)),
		sample(10, 10, etcd(105), suite(3)),
		sample(20, 30, etcd(110), suite(13)),
		sample(30, 40, etcd(112), suite(18)),
		sample(40, 44, etcd(112)),
	)
	events := []Event{
		ev(5, "start", ""), ev(5, "run", "TestA"), ev(6, "run", "TestA/x"), ev(7, "pass", "TestA/x"),
		ev(15, "pass", "TestA"), ev(15, "run", "TestB"), ev(25, "fail", "TestB"), ev(35, "fail", ""),
		{Time: at(36), Action: "start", Package: "q"}, {Time: at(38), Action: "skip", Package: "q"},
	}
	return events, rec
}

func TestComputeCostsEachTestAndSetUp(t *testing.T) {
	events, rec := costedRun()
	r := Compute(events, rec)
	// Each figure by hand: the part of each interval a span covers, in
	// proportion to its length.
	want := []TestCost{
		{Package: "p", Test: "TestA", Result: "pass", WallSeconds: 10, CPUSeconds: 5 + 10, WaitingSeconds: 10 - 15.0/2,
			TopProcesses: []ProcessCost{{ClassTestBinaries, 1.5 + 5, 6.5 / 15}, {"etcd", 2.5 + 2.5, 5.0 / 15}}},
		{Package: "p", Test: "TestB", Result: "fail", WallSeconds: 10, CPUSeconds: 10 + 5, WaitingSeconds: 10 - 15.0/2,
			TopProcesses: []ProcessCost{{ClassTestBinaries, 5 + 2.5, 7.5 / 15}, {"etcd", 2.5 + 1, 3.5 / 15}}},
		{Package: "p", Test: SetUpAndTearDown, Result: "fail", WallSeconds: 10, CPUSeconds: 5 + 2, WaitingSeconds: 10 - 7.0/2,
			TopProcesses: []ProcessCost{{ClassTestBinaries, 2.5, 2.5 / 7}, {"etcd", 1, 1.0 / 7}}},
		{Package: "q", Test: SetUpAndTearDown, Result: "skip", WallSeconds: 2, CPUSeconds: 0.8, WaitingSeconds: 2 - 0.8/2},
	}
	if len(r.Tests) != len(want) {
		t.Fatalf("tests %+v, want %+v", r.Tests, want)
	}
	for i, w := range want {
		assertTestCost(t, r.Tests[i], w)
	}
}

func TestComputeCostsEachClassOverTheWholeRun(t *testing.T) {
	events, rec := costedRun()
	r := Compute(events, rec)
	want := []ProcessCost{
		{ClassTestBinaries, 3 + 10 + 5, 18.0 / 44},
		{"etcd", 5 + 5 + 2, 12.0 / 44},
		{ClassNotAttributed, 44 - 18 - 12, 14.0 / 44},
	}
	assertProcessCosts(t, "processes", r.Processes, want)
	wantTotals := Totals{CPUs: 2, WallSeconds: 40, CPUSeconds: 44, CPUMinutes: 44.0 / 60, UsePercent: 100 * 44.0 / (40 * 2)}
	got := r.Totals
	if got.CPUs != wantTotals.CPUs || !near(got.WallSeconds, wantTotals.WallSeconds) || !near(got.CPUSeconds, wantTotals.CPUSeconds) ||
		!near(got.CPUMinutes, wantTotals.CPUMinutes) || !near(got.UsePercent, wantTotals.UsePercent) {
		t.Errorf("totals %+v, want %+v", got, wantTotals)
	}
}

func TestComputeKeepsOnlyTheTopClassesOfATest(t *testing.T) {
	var first, second []ProcSample
	for i := range topClasses + 2 {
		first = append(first, proc(10+i, 1, string(rune('a'+i)), 0))
		second = append(second, proc(10+i, 1, string(rune('a'+i)), float64(i+1)))
	}
	rec := record(sample(0, 0, first...), sample(10, 100, second...))
	events := []Event{ev(0, "start", ""), ev(0, "run", "TestA"), ev(10, "pass", "TestA"), ev(10, "pass", "")}
	r := Compute(events, rec)
	got := r.Tests[0].TopProcesses
	if len(got) != topClasses || got[0].Process != "g" || got[topClasses-1].Process != "c" {
		t.Errorf("top classes %+v, want the %d that used the most, g to c", got, topClasses)
	}
}

func assertTestCost(t *testing.T, got, want TestCost) {
	t.Helper()
	if got.Package != want.Package || got.Test != want.Test || got.Result != want.Result ||
		!near(got.WallSeconds, want.WallSeconds) || !near(got.CPUSeconds, want.CPUSeconds) || !near(got.WaitingSeconds, want.WaitingSeconds) {
		t.Errorf("got %+v, want %+v", got, want)
	}
	assertProcessCosts(t, want.Package+" "+want.Test, got.TopProcesses, want.TopProcesses)
}

func assertProcessCosts(t *testing.T, what string, got, want []ProcessCost) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %+v, want %+v", what, got, want)
	}
	for i := range want {
		if got[i].Process != want[i].Process || !near(got[i].CPUSeconds, want[i].CPUSeconds) || !near(got[i].Share, want[i].Share) {
			t.Errorf("%s[%d]: %+v, want %+v", what, i, got[i], want[i])
		}
	}
}

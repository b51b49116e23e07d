package cost

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"
)

// fakeProc writes a proc file system of a machine with 2 CPUs to a
// directory: files maps a path in it to its content.
func fakeProc(t *testing.T, files map[string]string) string {
	t.Helper()
	root := t.TempDir()
	for name, content := range files {
		path := filepath.Join(root, name)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return root
}

// procStat is /proc/<pid>/stat with the fields Sample reads: utime and
// stime in clock ticks, and the start time.
func procStat(pid int, comm string, utime, stime, start uint64) string {
	return fmt.Sprintf("%d (%s) S 0 1 1 0 -1 4194560 100 0 0 0 %d %d 0 0 20 0 8 0 %d 1000000 100 18446744073709551615 "+
		"1 1 0 0 0 0 0 0 0 0 0 17 0 0 0 0 0 0 0 0 0 0 0 0 0 0\n", pid, comm, utime, stime, start)
}

// machineStat is /proc/stat: user 100, nice 20, system 30, idle 1000,
// iowait 50, irq 5, softirq 5, steal 2, guest 7 and guest_nice 0 ticks.
const machineStat = "cpu  100 20 30 1000 50 5 5 2 7 0\n" +
	"cpu0 50 10 15 500 25 3 3 1 7 0\n" +
	"cpu1 50 10 15 500 25 2 2 1 0 0\n" +
	"btime 1700000000\n"

func TestSampleReadsTheMachineAndEveryProcess(t *testing.T) {
	root := fakeProc(t, map[string]string{
		"stat":      machineStat,
		"1/stat":    procStat(1, "etcd", 250, 50, 12345),
		"1/cmdline": "/usr/local/bin/etcd\x00--data-dir\x00/var/lib/etcd\x00",
		"2/stat":    procStat(2, "kworker/0:1", 1, 0, 2),
		"2/cmdline": "",
		// Process 3 exits between the listing and the reading of its stat.
		"3/cmdline":    "/bin/kubectl\x00",
		"self/cmdline": "",
	})
	now := at(7)
	s, err := NewSampler(root, func() time.Time { return now })
	if err != nil {
		t.Fatal(err)
	}
	got, err := s.Sample()
	if err != nil {
		t.Fatal(err)
	}
	// Busy: user, nice, system, irq, softirq and steal; not idle, iowait
	// or guest, which user counts already; ticks are hundredths.
	wantBusy := (100 + 20 + 30 + 5 + 5 + 2) / 100.0
	if !got.Time.Equal(now) || got.CPUs != 2 || !near(got.Busy, wantBusy) {
		t.Errorf("sample at %v of %d CPUs busy %v, want at %v of 2 CPUs busy %v", got.Time, got.CPUs, got.Busy, now, wantBusy)
	}
	sort.Slice(got.Procs, func(i, j int) bool { return got.Procs[i].PID < got.Procs[j].PID })
	want := []ProcSample{
		{PID: 1, Start: 12345, Class: "etcd", CPU: 3},
		{PID: 2, Start: 2, Class: ClassOther, CPU: 0.01},
	}
	if len(got.Procs) != len(want) {
		t.Fatalf("processes %+v, want %+v", got.Procs, want)
	}
	for i := range want {
		g := got.Procs[i]
		if g.PID != want[i].PID || g.Start != want[i].Start || g.Class != want[i].Class || !near(g.CPU, want[i].CPU) {
			t.Errorf("process %+v, want %+v", g, want[i])
		}
	}
}

func TestSampleWithoutMachineStatFails(t *testing.T) {
	root := fakeProc(t, map[string]string{"1/stat": procStat(1, "init", 1, 1, 1)})
	s, err := NewSampler(root, time.Now)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Sample(); err == nil || !strings.Contains(err.Error(), "CPU times of the machine") {
		t.Errorf("error %v, want one about the CPU times of the machine", err)
	}
}

// The command line is read once per process and again only after an exec,
// which the kernel shows as a new comm: go test turning into e2e.test.
func TestSampleClassifiesAProcessAgainOnlyAfterAnExec(t *testing.T) {
	root := fakeProc(t, map[string]string{
		"stat":      machineStat,
		"1/stat":    procStat(1, "go", 1, 0, 100),
		"1/cmdline": "/usr/local/go/bin/go\x00test\x00",
		"2/stat":    procStat(2, "etcd", 1, 0, 200),
		"2/cmdline": "/bin/etcd\x00",
	})
	s, err := NewSampler(root, time.Now)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Sample(); err != nil {
		t.Fatal(err)
	}
	// Process 1 executes the test binary; process 2 rewrites its command
	// line without an exec, which the class does not follow.
	rewrite := map[string]string{
		"1/stat":    procStat(1, "e2e.test", 1, 0, 100),
		"1/cmdline": "/tmp/go-build1/b001/e2e.test\x00",
		"2/cmdline": "/bin/kubectl\x00",
	}
	for name, content := range rewrite {
		if err := os.WriteFile(filepath.Join(root, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got, err := s.Sample()
	if err != nil {
		t.Fatal(err)
	}
	classes := map[int]string{}
	for _, p := range got.Procs {
		classes[p.PID] = p.Class
	}
	if classes[1] != ClassTestBinaries || classes[2] != "etcd" {
		t.Errorf("classes after the exec %v, want 1: %s, 2: etcd", classes, ClassTestBinaries)
	}
}

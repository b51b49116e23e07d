package cost

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
)

func TestWriteMarkdownRoundsToWholeSecondsAndPercent(t *testing.T) {
	r := Report{
		Totals: Totals{CPUs: 2, WallSeconds: 1234.5, CPUSeconds: 1851.6, CPUMinutes: 30.86, UsePercent: 74.99},
		Tests: []TestCost{
			{Package: "example.com/m/e2e", Test: "TestSlow", Result: "pass", WallSeconds: 1000.4, WaitingSeconds: 2.5, CPUSeconds: 1500.5},
			{Package: "example.com/m/e2e", Test: SetUpAndTearDown, Result: "fail", WallSeconds: 9.49, WaitingSeconds: 0, CPUSeconds: 0.2},
			{Package: "example.com/m/e2e", Test: "TestOdd|Name", Result: ResultIncomplete, WallSeconds: 1, WaitingSeconds: 1, CPUSeconds: 0},
		},
		Processes: []ProcessCost{
			{Process: "kube-apiserver", CPUSeconds: 231.4, Share: 0.125},
			{Process: ClassNotAttributed, CPUSeconds: -0.3, Share: -0.004},
		},
	}
	want := "The run took 1,235 s of wall time on 2 CPUs and kept them busy for 1,852 CPU-seconds (30.9 CPU-minutes): 75% use of the 2 CPUs.\n" +
		"\n" +
		"| package | test | result | wall s | waiting s | CPU-s |\n" +
		"|---|---|---|---:|---:|---:|\n" +
		"| example.com/m/e2e | TestSlow | pass | 1,000 | 3 | 1,501 |\n" +
		"| example.com/m/e2e | (set-up and tear-down) | fail | 9 | 0 | 0 |\n" +
		"| example.com/m/e2e | TestOdd\\|Name | incomplete | 1 | 1 | 0 |\n" +
		"\n" +
		"| process | CPU-s | share |\n" +
		"|---|---:|---:|\n" +
		"| kube-apiserver | 231 | 13% |\n" +
		"| not attributed (short-lived processes, the kernel) | 0 | 0% |\n"
	var b bytes.Buffer
	if err := WriteMarkdown(&b, r); err != nil {
		t.Fatal(err)
	}
	if b.String() != want {
		t.Errorf("got\n%s\nwant\n%s", b.String(), want)
	}
}

func TestWriteFilesCreateTheirDirectory(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "a", "b")
	r := Report{ExitCode: 1, Totals: Totals{CPUs: 4, CPUSeconds: 3}, Tests: []TestCost{{Package: "p", Test: "TestA", Result: "fail"}}}
	if err := WriteJSON(filepath.Join(dir, "cost.json"), r); err != nil {
		t.Fatal(err)
	}
	if err := WriteMarkdownFile(filepath.Join(dir, "md", "cost.md"), r); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(dir, "cost.json"))
	if err != nil {
		t.Fatal(err)
	}
	var back Report
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	if back.ExitCode != 1 || back.Totals.CPUs != 4 || back.Totals.CPUSeconds != 3 || len(back.Tests) != 1 || back.Tests[0].Test != "TestA" {
		t.Errorf("read back %+v, want %+v", back, r)
	}
	md, err := os.ReadFile(filepath.Join(dir, "md", "cost.md"))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(md, []byte("| p | TestA | fail | 0 | 0 | 0 |\n")) {
		t.Errorf("the Markdown file lacks the test's row:\n%s", md)
	}
}

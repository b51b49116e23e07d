package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestRunWritesTheReportsAndGivesTheCommandsExitCode(t *testing.T) {
	dir := t.TempDir()
	jsonPath, mdPath := filepath.Join(dir, "out", "cost.json"), filepath.Join(dir, "cost.md")
	var stdout, stderr bytes.Buffer
	code, err := run([]string{"-interval", "10ms", "-json", jsonPath, "-md", mdPath, "--", "sh", "-c", "echo plain; exit 2"}, &stdout, &stderr)
	if err != nil {
		t.Fatal(err)
	}
	if code != 2 {
		t.Errorf("exit code %d, want 2", code)
	}
	if !strings.HasPrefix(stdout.String(), "plain\n\nThe run took ") || !strings.Contains(stdout.String(), "| process | CPU-s | share |") {
		t.Errorf("stdout lacks the command's output followed by the report:\n%s", stdout.String())
	}
	md, err := os.ReadFile(mdPath)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasSuffix(stdout.String(), string(md)) {
		t.Errorf("the Markdown file differs from the report on stdout:\n%s", md)
	}
	b, err := os.ReadFile(jsonPath)
	if err != nil {
		t.Fatal(err)
	}
	var report struct {
		Command         []string `json:"command"`
		ExitCode        int      `json:"exit_code"`
		IntervalSeconds float64  `json:"interval_seconds"`
	}
	if err := json.Unmarshal(b, &report); err != nil {
		t.Fatal(err)
	}
	if report.ExitCode != 2 || len(report.Command) != 3 || report.IntervalSeconds != 0.01 {
		t.Errorf("JSON report %+v, want the command, its exit code 2 and the interval", report)
	}
}

func TestRunWithoutACommandFails(t *testing.T) {
	var stdout, stderr bytes.Buffer
	code, err := run([]string{"-json", "x.json"}, &stdout, &stderr)
	if err == nil || code != failed {
		t.Errorf("code %d and error %v, want %d and a usage error", code, err, failed)
	}
}

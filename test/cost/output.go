package cost

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// WriteMarkdown writes the report as a block without a heading that
// docs/benchmarks.md takes as it is: a line of totals, the tests by
// CPU-seconds and the processes by CPU-seconds, in whole seconds and whole
// percent.
func WriteMarkdown(w io.Writer, r Report) error {
	var b bytes.Buffer
	t := r.Totals
	fmt.Fprintf(&b, "The run took %s s of wall time on %d CPUs and kept them busy for %s CPU-seconds (%.1f CPU-minutes): %s%% use of the %d CPUs.\n\n",
		whole(t.WallSeconds), t.CPUs, whole(t.CPUSeconds), t.CPUMinutes, percent(t.UsePercent/100), t.CPUs)
	b.WriteString("| package | test | result | wall s | waiting s | CPU-s |\n|---|---|---|---:|---:|---:|\n")
	for _, c := range r.Tests {
		fmt.Fprintf(&b, "| %s | %s | %s | %s | %s | %s |\n", cell(c.Package), cell(c.Test), c.Result,
			whole(c.WallSeconds), whole(c.WaitingSeconds), whole(c.CPUSeconds))
	}
	b.WriteString("\n| process | CPU-s | share |\n|---|---:|---:|\n")
	for _, p := range r.Processes {
		fmt.Fprintf(&b, "| %s | %s | %s%% |\n", cell(p.Process), whole(p.CPUSeconds), percent(p.Share))
	}
	if _, err := w.Write(b.Bytes()); err != nil {
		return fmt.Errorf("write the Markdown report: %w", err)
	}
	return nil
}

// whole rounds seconds to a whole number with thousands separated by
// commas, as docs/benchmarks.md writes them.
func whole(v float64) string {
	n := int64(math.Round(v))
	s := strconv.FormatInt(n, 10)
	sign := ""
	if n < 0 {
		sign, s = "-", s[1:]
	}
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return sign + s
}

// percent rounds a fraction to whole percent.
func percent(fraction float64) string {
	// Adding zero turns the negative zero of a small negative share
	// into 0, which reads as it should.
	return strconv.FormatFloat(math.Round(100*fraction)+0, 'f', 0, 64)
}

// cell escapes what would end a table cell.
func cell(s string) string { return strings.ReplaceAll(s, "|", `\|`) }

// WriteMarkdownFile writes the report as WriteMarkdown does to path,
// creating its directory.
func WriteMarkdownFile(path string, r Report) error {
	var b bytes.Buffer
	if err := WriteMarkdown(&b, r); err != nil {
		return err
	}
	return writeFile(path, b.Bytes())
}

// WriteJSON writes the report, indented, to path, creating its directory.
func WriteJSON(path string, r Report) error {
	b, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return fmt.Errorf("encode the report: %w", err)
	}
	return writeFile(path, append(b, '\n'))
}

func writeFile(path string, content []byte) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return fmt.Errorf("create the directory of %s: %w", path, err)
	}
	if err := os.WriteFile(path, content, 0o644); err != nil {
		return fmt.Errorf("write the report: %w", err)
	}
	return nil
}

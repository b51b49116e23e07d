// Command test-cost runs `go test -json` and tells what each top-level test
// and each process of the test stack cost the machine (package cost):
//
//	test-cost [-interval 1s] [-json FILE] [-md FILE] -- go test -json -p 1 -count=1 ./test/e2e
//
// The tests' output goes to standard output as they run, then the report in
// Markdown; the exit code is the command's.
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/prometheus/procfs"

	"github.com/kyma-project/kim-snatch/test/cost"
)

// failed is the exit code when the command could not be run or the report
// not written, as env and nohup use.
const failed = 125

func main() {
	code, err := run(os.Args[1:], os.Stdout, os.Stderr)
	if err != nil {
		fmt.Fprintln(os.Stderr, "test-cost:", err)
		if code == 0 {
			code = failed
		}
	}
	os.Exit(code)
}

func run(args []string, stdout, stderr io.Writer) (int, error) {
	fs := flag.NewFlagSet("test-cost", flag.ContinueOnError)
	interval := fs.Duration("interval", time.Second, "How often /proc is sampled.")
	jsonPath := fs.String("json", "", "File the report is written to as JSON; its directory is created.")
	mdPath := fs.String("md", "", "File the report is written to as Markdown, besides standard output.")
	if err := fs.Parse(args); err != nil {
		return failed, err
	}
	if fs.NArg() == 0 || *interval <= 0 {
		return failed, errors.New("usage: test-cost [-interval 1s] [-json FILE] [-md FILE] -- COMMAND [ARG...]")
	}
	sampler, err := cost.NewSampler(procfs.DefaultMountPoint, time.Now)
	if err != nil {
		return failed, err
	}
	signals := make(chan os.Signal, 1)
	signal.Notify(signals, syscall.SIGINT, syscall.SIGTERM)
	defer signal.Stop(signals)
	out, err := cost.Run(cost.Options{Args: fs.Args(), Interval: *interval, Stdout: stdout, Stderr: stderr, Signals: signals, Sampler: sampler})
	if out.Recording == nil {
		return failed, err
	}
	report := cost.Compute(out.Events, out.Recording)
	report.Command, report.ExitCode, report.IntervalSeconds = fs.Args(), out.ExitCode, interval.Seconds()
	return out.ExitCode, errors.Join(err, write(report, stdout, *mdPath, *jsonPath))
}

// write writes the report to stdout and to the files named.
func write(report cost.Report, stdout io.Writer, mdPath, jsonPath string) error {
	if _, err := fmt.Fprintln(stdout); err != nil {
		return fmt.Errorf("write the report: %w", err)
	}
	if err := cost.WriteMarkdown(stdout, report); err != nil {
		return err
	}
	if mdPath != "" {
		if err := cost.WriteMarkdownFile(mdPath, report); err != nil {
			return err
		}
	}
	if jsonPath != "" {
		return cost.WriteJSON(jsonPath, report)
	}
	return nil
}

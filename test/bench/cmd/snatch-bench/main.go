// Command snatch-bench runs the benchmark harness of test/bench, prints
// its table and writes its results as JSON. `make bench` runs it at full
// scale; the flags scale it down.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"strings"

	"github.com/kyma-project/kim-snatch/test/bench"
	"github.com/kyma-project/kim-snatch/test/bench/internal/command"
)

// options are the command line: the run's Config and what is not in it.
type options struct {
	cfg           bench.Config
	out, sections string
	smoke         bool
}

// flagSet binds the flags to o, with o's figures as their defaults.
func (o *options) flagSet() *flag.FlagSet {
	fs := flag.NewFlagSet("snatch-bench", flag.ContinueOnError)
	fs.BoolVar(&o.smoke, "smoke", false, "Start from the smoke scale instead of the full one; other flags still apply.")
	fs.StringVar(&o.out, "out", "bin/bench/results.json", "Where the JSON results are written.")
	fs.StringVar(&o.sections, "sections", strings.Join(bench.SectionNames, ","), "Comma-separated sections to run.")
	c := &o.cfg
	fs.StringVar(&c.WorkDir, "work-dir", "", "Keep binaries, certificates and process logs here instead of a temporary directory.")
	fs.DurationVar(&c.CellDuration, "cell-duration", c.CellDuration, "Measuring time of each webhook cell.")
	fs.StringVar(&c.BenchTime, "benchtime", c.BenchTime, "go test -benchtime of the handler benchmarks.")
	for _, f := range []struct {
		v           *int
		name, usage string
	}{
		{&c.CellMaxReviews, "cell-max-reviews", "Upper bound of the reviews of a webhook cell."},
		{&c.Pods, "pods", "Pods created per arm at API-server level."},
		{&c.Rounds, "rounds", "Interleaved rounds the Pods are split into."},
		{&c.Creators, "creators", "Concurrent Pod creators."},
		{&c.Rotations, "rotations", "CA rotations propagated by the syncer."},
		{&c.UnrelatedSecrets, "unrelated-secrets", "Unrelated Secrets for the syncer's memory figure."},
		{&c.CheckPods, "check-pods", "Pods the check section's cluster holds."},
		{&c.CheckNodes, "check-nodes", "Nodes the check section's Pods are bound to."},
		{&c.CheckRuns, "check-runs", "Runs of check and of its baseline."},
	} {
		fs.IntVar(f.v, f.name, *f.v, f.usage)
	}
	return fs
}

func main() {
	o := options{cfg: bench.Full()}
	command.Main(o.flagSet(), func(ctx context.Context) error {
		if o.smoke {
			// The smoke scale, and on it what the command line sets.
			o.cfg = bench.Smoke()
			if err := o.flagSet().Parse(os.Args[1:]); err != nil {
				return err
			}
		}
		return run(ctx, o)
	})
}

func run(ctx context.Context, o options) error {
	cfg := o.cfg
	cfg.Sections = strings.Split(o.sections, ",")
	cfg.Progress = os.Stderr
	res, err := bench.Run(ctx, cfg)
	if res != nil {
		if werr := res.WriteJSON(o.out); werr != nil && err == nil {
			err = werr
		}
		fmt.Println()
		_ = res.WriteTable(os.Stdout)
		fmt.Printf("\nresults: %s\n", o.out)
	}
	return err
}

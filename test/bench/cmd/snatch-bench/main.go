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
	c := &o.cfg
	fs.BoolVar(&o.smoke, "smoke", false, "Start from the smoke scale instead of the full one; other flags still apply.")
	fs.StringVar(&o.out, "out", "bin/bench/results.json", "Where the JSON results are written.")
	fs.StringVar(&o.sections, "sections", strings.Join(bench.SectionNames, ","), "Comma-separated sections to run.")
	fs.DurationVar(&c.CellDuration, "cell-duration", c.CellDuration, "Measuring time of each webhook cell.")
	fs.IntVar(&c.CellMaxReviews, "cell-max-reviews", c.CellMaxReviews, "Upper bound of the reviews of a webhook cell.")
	fs.StringVar(&c.BenchTime, "benchtime", c.BenchTime, "go test -benchtime of the handler benchmarks.")
	fs.IntVar(&c.Pods, "pods", c.Pods, "Pods created per arm at API-server level.")
	fs.IntVar(&c.Rounds, "rounds", c.Rounds, "Interleaved rounds the Pods are split into.")
	fs.IntVar(&c.Creators, "creators", c.Creators, "Concurrent Pod creators.")
	fs.IntVar(&c.Rotations, "rotations", c.Rotations, "CA rotations propagated by the syncer.")
	fs.IntVar(&c.UnrelatedSecrets, "unrelated-secrets", c.UnrelatedSecrets, "Unrelated Secrets for the syncer's memory figure.")
	fs.IntVar(&c.CheckPods, "check-pods", c.CheckPods, "Pods the check section's cluster holds.")
	fs.IntVar(&c.CheckNodes, "check-nodes", c.CheckNodes, "Nodes the check section's Pods are bound to.")
	fs.IntVar(&c.CheckRuns, "check-runs", c.CheckRuns, "Runs of check and of its baseline.")
	fs.StringVar(&c.WorkDir, "work-dir", "", "Keep binaries, certificates and process logs here instead of a temporary directory.")
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

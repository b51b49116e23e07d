// Command snatch-bench runs the benchmark harness of test/bench, prints
// its table and writes its results as JSON. `make bench` runs it at full
// scale; the flags scale it down.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/kyma-project/kim-snatch/test/bench"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, os.Args[1:])
	stop()
	if err != nil {
		fmt.Fprintln(os.Stderr, "snatch-bench:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, args []string) error {
	cfg := bench.Full()
	fs := flag.NewFlagSet("snatch-bench", flag.ContinueOnError)
	smoke := fs.Bool("smoke", false, "Start from the smoke scale instead of the full one; other flags still apply.")
	out := fs.String("out", "bin/bench/results.json", "Where the JSON results are written.")
	sections := fs.String("sections", strings.Join(bench.SectionNames, ","), "Comma-separated sections to run.")
	scale := bench.Config{}
	fs.DurationVar(&scale.CellDuration, "cell-duration", 0, fmt.Sprintf("Measuring time of each webhook cell (default %s).", cfg.CellDuration))
	fs.IntVar(&scale.CellMaxReviews, "cell-max-reviews", 0, fmt.Sprintf("Upper bound of the reviews of a webhook cell (default %d).", cfg.CellMaxReviews))
	fs.StringVar(&scale.BenchTime, "benchtime", "", fmt.Sprintf("go test -benchtime of the handler benchmarks (default %s).", cfg.BenchTime))
	fs.IntVar(&scale.Pods, "pods", 0, fmt.Sprintf("Pods created per arm at API-server level (default %d).", cfg.Pods))
	fs.IntVar(&scale.Rounds, "rounds", 0, fmt.Sprintf("Interleaved rounds the Pods are split into (default %d).", cfg.Rounds))
	fs.IntVar(&scale.Creators, "creators", 0, fmt.Sprintf("Concurrent Pod creators (default %d).", cfg.Creators))
	fs.IntVar(&scale.Rotations, "rotations", 0, fmt.Sprintf("CA rotations propagated by the syncer (default %d).", cfg.Rotations))
	fs.IntVar(&scale.UnrelatedSecrets, "unrelated-secrets", -1, fmt.Sprintf("Unrelated Secrets for the syncer's memory figure (default %d).", cfg.UnrelatedSecrets))
	fs.IntVar(&scale.CheckPods, "check-pods", 0, fmt.Sprintf("Pods the check section's cluster holds (default %d).", cfg.CheckPods))
	fs.IntVar(&scale.CheckNodes, "check-nodes", 0, fmt.Sprintf("Nodes the check section's Pods are bound to (default %d).", cfg.CheckNodes))
	fs.IntVar(&scale.CheckRuns, "check-runs", 0, fmt.Sprintf("Runs of check and of its baseline (default %d).", cfg.CheckRuns))
	fs.StringVar(&cfg.WorkDir, "work-dir", "", "Keep binaries, certificates and process logs here instead of a temporary directory.")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *smoke {
		workDir := cfg.WorkDir
		cfg = bench.Smoke()
		cfg.WorkDir = workDir
	}
	overrideDuration(&cfg.CellDuration, scale.CellDuration)
	overrideInt(&cfg.CellMaxReviews, scale.CellMaxReviews)
	if scale.BenchTime != "" {
		cfg.BenchTime = scale.BenchTime
	}
	overrideInt(&cfg.Pods, scale.Pods)
	overrideInt(&cfg.Rounds, scale.Rounds)
	overrideInt(&cfg.Creators, scale.Creators)
	overrideInt(&cfg.Rotations, scale.Rotations)
	overrideInt(&cfg.CheckPods, scale.CheckPods)
	overrideInt(&cfg.CheckNodes, scale.CheckNodes)
	overrideInt(&cfg.CheckRuns, scale.CheckRuns)
	if scale.UnrelatedSecrets >= 0 {
		cfg.UnrelatedSecrets = scale.UnrelatedSecrets
	}
	cfg.Sections = strings.Split(*sections, ",")
	cfg.KeepWorkDir = cfg.WorkDir != ""
	cfg.Progress = os.Stderr

	res, err := bench.Run(ctx, cfg)
	if res != nil {
		if werr := res.WriteJSON(*out); werr != nil && err == nil {
			err = werr
		}
		fmt.Println()
		_ = res.WriteTable(os.Stdout)
		fmt.Printf("\nresults: %s\n", *out)
	}
	return err
}

func overrideInt(dst *int, v int) {
	if v > 0 {
		*dst = v
	}
}

func overrideDuration[T ~int64](dst *T, v T) {
	if v > 0 {
		*dst = v
	}
}

package bench

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"time"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/kyma-project/kim-snatch/test/framework"
)

// Config sets the scale of a run. Full returns the scale of `make bench`,
// Smoke the scale of the test that keeps the harness working.
type Config struct {
	// CellDuration is how long each webhook cell (binary × payload ×
	// concurrency) is measured, after a warm-up.
	CellDuration time.Duration
	// CellMaxReviews bounds the reviews of one cell.
	CellMaxReviews int
	// Concurrency are the webhook cells' numbers of connections.
	Concurrency []int
	// BenchTime is go test's -benchtime for the handler benchmarks.
	BenchTime string
	// Pods is the number of Pods created per arm (A, B, C) at API-server
	// level; Rounds splits them into interleaved rounds.
	Pods, Rounds int
	// Creators is the number of concurrent Pod creators.
	Creators int
	// Rotations is the number of CA rotations the syncer propagates.
	Rotations int
	// UnrelatedSecrets of SecretSize bytes are created for the syncer's
	// memory figure.
	UnrelatedSecrets, SecretSize int
	// Settle is how long the syncer rests before its memory is read.
	Settle time.Duration
	// CheckPods Pods over CheckNodes Nodes are what `cabundle-syncer check`
	// reads; CheckRuns is how often it and its baseline run.
	CheckPods, CheckNodes, CheckRuns int
	// Sections selects what runs; empty means all of SectionNames.
	Sections []string
	// WorkDir holds the built binaries, certificates and process logs; when
	// empty, a temporary directory removed at the end of the run.
	WorkDir string
	// Progress receives one line per step; nil discards them.
	Progress io.Writer
}

// SectionNames are all sections, in the order they run.
var SectionNames = []string{"webhook", "hostile", "handler", "apiserver", "syncer", "check"}

// Full is the scale of `make bench`.
func Full() Config {
	return Config{
		CellDuration:     5 * time.Second,
		CellMaxReviews:   1_000_000,
		Concurrency:      []int{1, 8, 64},
		BenchTime:        "2s",
		Pods:             6000,
		Rounds:           10,
		Creators:         16,
		Rotations:        50,
		UnrelatedSecrets: 2000,
		SecretSize:       32 << 10,
		Settle:           3 * time.Second,
		CheckPods:        30_000,
		CheckNodes:       300,
		CheckRuns:        3,
	}
}

// Smoke is the same run at the smallest scale that still yields every
// figure, at the concurrencies, creators and Secret size of Full.
func Smoke() Config {
	c := Full()
	c.CellDuration = 300 * time.Millisecond
	c.CellMaxReviews = 20_000
	c.BenchTime = "200x"
	c.Pods = 48
	c.Rounds = 2
	c.Rotations = 5
	c.UnrelatedSecrets = 100
	c.Settle = 500 * time.Millisecond
	c.CheckPods = 1200
	c.CheckNodes = 20
	c.CheckRuns = 1
	return c
}

// Validate reports every figure that cannot run.
func (c Config) Validate() error {
	var errs []error
	if c.CellDuration <= 0 || c.CellMaxReviews <= 0 {
		errs = append(errs, errors.New("the cell duration and review bound must be positive"))
	}
	for _, n := range c.Concurrency {
		if n < 1 {
			errs = append(errs, fmt.Errorf("concurrency %d is below 1", n))
		}
	}
	if len(c.Concurrency) == 0 {
		errs = append(errs, errors.New("at least one concurrency is needed"))
	}
	if c.Rounds < 1 || c.Pods < c.Rounds || c.Creators < 1 {
		errs = append(errs, fmt.Errorf("want pods ≥ rounds ≥ 1 and creators ≥ 1, got %d pods, %d rounds, %d creators", c.Pods, c.Rounds, c.Creators))
	}
	if c.Rotations < 1 || c.UnrelatedSecrets < 0 || c.SecretSize < 1 {
		errs = append(errs, errors.New("want at least one rotation, no negative Secret count and a positive Secret size"))
	}
	if c.CheckNodes < 1 || c.CheckPods < 0 || c.CheckRuns < 1 {
		errs = append(errs, fmt.Errorf("want at least one Node and one check run, and no negative Pod count, got %d Nodes, %d runs, %d Pods", c.CheckNodes, c.CheckRuns, c.CheckPods))
	}
	for _, s := range c.Sections {
		if !slices.Contains(SectionNames, s) {
			errs = append(errs, fmt.Errorf("unknown section %q, want one of %v", s, SectionNames))
		}
	}
	return errors.Join(errs...)
}

// Run runs the selected sections one after another and returns what they
// measured. A section that fails ends the run with its error; the figures
// of the sections before it are returned with it.
func Run(ctx context.Context, cfg Config) (*Results, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	machine, err := describeMachine()
	if err != nil {
		return nil, err
	}
	res := &Results{Started: time.Now().UTC(), Machine: machine, Scale: scaleOf(cfg)}
	r := &runner{cfg: cfg, res: res, log: cfg.Progress}
	if r.log == nil {
		r.log = io.Discard
	}
	if r.dir = cfg.WorkDir; r.dir == "" {
		if r.dir, err = os.MkdirTemp("", "kim-snatch-bench-"); err != nil {
			return nil, err
		}
		defer func() { _ = os.RemoveAll(r.dir) }()
	} else if err := os.MkdirAll(r.dir, 0o755); err != nil {
		return nil, err
	}

	sections := map[string]func(context.Context) error{
		"webhook": r.webhookSection, "hostile": r.hostileSection, "handler": r.handlerSection, "apiserver": r.apiServerSection,
		"syncer": r.syncerSection, "check": r.checkSection,
	}
	for _, name := range SectionNames {
		if len(cfg.Sections) > 0 && !slices.Contains(cfg.Sections, name) {
			continue
		}
		start := time.Now()
		r.progress("== %s", name)
		err := sections[name](ctx)
		for _, stop := range slices.Backward(r.stops) {
			stop()
		}
		r.stops = nil
		if err != nil {
			res.Finished = time.Now().UTC()
			return res, fmt.Errorf("section %s: %w (work directory %s)", name, err, r.dir)
		}
		r.progress("== %s done in %s", name, time.Since(start).Round(100*time.Millisecond))
	}
	res.Targets = targetsOf(res)
	res.Finished = time.Now().UTC()
	return res, nil
}

// runner carries one run's state between its sections.
type runner struct {
	cfg Config
	res *Results
	dir string
	log io.Writer
	// stops stop what the current section started, last first, when it
	// ends.
	stops []func()
}

func (r *runner) progress(format string, args ...any) {
	fmt.Fprintf(r.log, "%s "+format+"\n", append([]any{time.Now().Format("15:04:05")}, args...)...)
}

// startControlPlane starts a local control plane for the section, and a
// client without client-side rate limits, so that the section's own
// requests do not pace what it measures.
func (r *runner) startControlPlane(ctx context.Context, opts framework.Options) (*framework.Cluster, kubernetes.Interface, error) {
	startCtx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	cluster, err := framework.Start(startCtx, opts)
	cancel()
	if err != nil {
		return nil, nil, fmt.Errorf("start the control plane: %w", err)
	}
	r.stops = append(r.stops, func() { _ = cluster.Stop() })
	cfg := rest.CopyConfig(cluster.Config)
	cfg.QPS, cfg.Burst = -1, 0
	cs, err := kubernetes.NewForConfig(cfg)
	return cluster, cs, err
}

package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"math"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/prometheus/common/model"
	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/model/textparse"
	"github.com/prometheus/prometheus/model/value"
	"github.com/prometheus/prometheus/promql"
	"github.com/prometheus/prometheus/rules"
	"github.com/prometheus/prometheus/storage"
	"github.com/prometheus/prometheus/util/teststorage"
)

// Conditions is what `promrules conditions` prints: the alerts whose
// expression returns at least one series at the evaluation time, ignoring
// `for`, and the others. Each list is sorted; Labels gives, for each
// holding alert, the label sets its expression returned (with the rule's
// own labels, as Alertmanager would see them).
type Conditions struct {
	At         time.Time                      `json:"at"`
	Holding    []string                       `json:"holding"`
	NotHolding []string                       `json:"notHolding"`
	Labels     map[string][]map[string]string `json:"labels"`
}

// target is one scraped exposition: its file ("-" for stdin) and the labels
// Prometheus would give the target (job, namespace, pod, ...).
type target struct {
	file   string
	labels labels.Labels
}

type targets []target

func (ts *targets) String() string { return fmt.Sprint(*ts) }

// Set parses FILE[,NAME=VALUE...].
func (ts *targets) Set(s string) error {
	file, rest, _ := strings.Cut(s, ",")
	if file == "" {
		return errors.New("empty file name")
	}
	ls, err := parseLabels(rest)
	if err != nil {
		return err
	}
	*ts = append(*ts, target{file: file, labels: ls})
	return nil
}

// downTargets are targets that Prometheus failed to scrape, by their labels.
type downTargets []labels.Labels

func (ds *downTargets) String() string { return fmt.Sprint(*ds) }

// Set parses NAME=VALUE[,NAME=VALUE...].
func (ds *downTargets) Set(s string) error {
	ls, err := parseLabels(s)
	if err != nil {
		return err
	}
	if ls.IsEmpty() {
		return errors.New("a target needs labels, at least job")
	}
	*ds = append(*ds, ls)
	return nil
}

// parseLabels parses NAME=VALUE[,NAME=VALUE...]; empty is no labels.
func parseLabels(s string) (labels.Labels, error) {
	if s == "" {
		return labels.EmptyLabels(), nil
	}
	parts := strings.Split(s, ",")
	b := labels.NewScratchBuilder(len(parts))
	for _, kv := range parts {
		k, v, ok := strings.Cut(kv, "=")
		if !ok || !model.LegacyValidation.IsValidLabelName(k) {
			return labels.EmptyLabels(), fmt.Errorf("%q: want NAME=VALUE with a valid label name", kv)
		}
		b.Add(k, v)
	}
	b.Sort()
	return b.Labels(), nil
}

// scrapeFlags are the scrapes that conditions and eval load: the targets'
// current and previous expositions, and the targets that were down.
type scrapeFlags struct {
	current, before targets
	down            downTargets
}

func (s *scrapeFlags) bind(fs *flag.FlagSet, metricsUsage string) {
	fs.Var(&s.current, "metrics", metricsUsage)
	fs.Var(&s.before, "before", "the previous scrape `FILE[,NAME=VALUE...]` of a target, loaded one -interval earlier, so that rate() and increase() have two samples; repeatable")
	fs.Var(&s.down, "down", "a target `NAME=VALUE[,NAME=VALUE...]` that Prometheus failed to scrape, by its labels (up is 0); repeatable")
}

// conditions loads scraped expositions into a fresh TSDB at one instant,
// evaluates every rule group there once with Prometheus' rule engine
// (recording rules first write their series), and reports which alerts'
// expressions hold.
func conditions(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("conditions", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var sc scrapeFlags
	sc.bind(fs, "an exposition `FILE[,NAME=VALUE...]` scraped at the evaluation time, with its target's labels; repeatable; - is stdin (the default when no -metrics is given)")
	at := fs.String("at", "", "evaluation time, RFC 3339 or Unix seconds (default now: time() must agree with the certificates' notAfter)")
	interval := fs.Duration("interval", 30*time.Second, "scrape interval between -before and -metrics (the ServiceMonitors' interval)")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: promrules conditions [flags] RULEFILE... [< metrics.txt]")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return 2
	}
	files := fs.Args()
	if len(files) == 0 {
		fs.Usage()
		return 2
	}
	if len(sc.current) == 0 {
		sc.current = targets{{file: "-", labels: labels.EmptyLabels()}}
	}
	stdins := 0
	for _, t := range slices.Concat(sc.current, sc.before) {
		if t.file == "-" {
			stdins++
		}
	}
	if stdins > 1 {
		fmt.Fprintln(stderr, "stdin (-) can hold only one exposition")
		return 2
	}
	ts := time.Now()
	if *at != "" {
		var err error
		if ts, err = parseTime(*at); err != nil {
			fmt.Fprintln(stderr, "-at:", err)
			return 2
		}
	}
	ts = ts.Truncate(time.Millisecond)
	res, err := evaluate(files, ts, *interval, sc, stdin, stderr)
	if err != nil {
		fmt.Fprintln(stderr, err)
		return 1
	}
	return writeJSON(res, stdout, stderr)
}

func parseTime(s string) (time.Time, error) {
	if f, err := strconv.ParseFloat(s, 64); err == nil {
		sec := int64(f)
		return time.Unix(sec, int64((f-float64(sec))*1e9)).UTC(), nil
	}
	return time.Parse(time.RFC3339Nano, s)
}

func evaluate(files []string, ts time.Time, interval time.Duration, sc scrapeFlags, stdin io.Reader, stderr io.Writer) (*Conditions, error) {
	var res *Conditions
	err := withScrapes(ts, interval, sc, stdin, func(ctx context.Context, db *teststorage.TestStorage) error {
		groups, err := loadGroups(ctx, db, newEngine(), time.Minute, labels.EmptyLabels(), files, stderr)
		if err != nil {
			return err
		}
		if err := evalGroups(ctx, groups, ts); err != nil {
			return err
		}
		res = holding(groups, ts)
		return nil
	})
	return res, err
}

// holding sorts the alerts of groups, evaluated once at ts, by whether
// their expressions hold. After one evaluation an alert is active (pending,
// or firing when it has no `for`) exactly when its expression returned
// that series.
func holding(groups []*rules.Group, ts time.Time) *Conditions {
	res := &Conditions{At: ts.UTC(), Holding: []string{}, NotHolding: []string{}, Labels: map[string][]map[string]string{}}
	for _, g := range groups {
		for _, r := range g.Rules() {
			ar, ok := r.(*rules.AlertingRule)
			if !ok {
				continue
			}
			active := ar.ActiveAlerts()
			if len(active) == 0 {
				res.NotHolding = append(res.NotHolding, ar.Name())
				continue
			}
			res.Holding = append(res.Holding, ar.Name())
			for _, a := range active {
				res.Labels[ar.Name()] = append(res.Labels[ar.Name()], a.Labels.Map())
			}
		}
	}
	slices.Sort(res.Holding)
	res.Holding = slices.Compact(res.Holding)
	slices.Sort(res.NotHolding)
	res.NotHolding = slices.Compact(res.NotHolding)
	return res
}

// appendScrapes writes the scraped expositions into db as Prometheus' scrape
// loop would: the previous scrapes one interval before ts, the current ones
// at ts, staleness markers for series the current scrapes dropped, and up=0
// for the targets that could not be scraped.
func appendScrapes(ctx context.Context, db storage.AppendableV2, ts time.Time, interval time.Duration, current, before targets, down downTargets, stdin io.Reader) error {
	app := db.AppenderV2(ctx)
	previous := map[string]labels.Labels{}
	for _, t := range before {
		written, err := appendExposition(app, t, ts.Add(-interval), stdin)
		if err != nil {
			return err
		}
		for _, ls := range written {
			previous[ls.String()] = ls
		}
	}
	for _, t := range current {
		written, err := appendExposition(app, t, ts, stdin)
		if err != nil {
			return err
		}
		for _, ls := range written {
			delete(previous, ls.String())
		}
	}
	// A series that the previous scrape had and this one lacks, because
	// the target dropped it or the target is gone, ends with a staleness
	// marker, as Prometheus' scrape loop writes one: it is no longer
	// returned at the evaluation time.
	for _, ls := range previous {
		if _, err := app.Append(0, ls, 0, ts.UnixMilli(), math.Float64frombits(value.StaleNaN), nil, nil, storage.AppendV2Options{}); err != nil {
			return err
		}
	}
	for _, t := range down {
		if _, err := app.Append(0, upSeries(t), 0, ts.UnixMilli(), 0, nil, nil, storage.AppendV2Options{}); err != nil {
			return err
		}
	}
	return app.Commit()
}

// newEngine returns a PromQL engine with Prometheus' defaults for what the
// rules may use.
func newEngine() *promql.Engine {
	return promql.NewEngine(promql.EngineOpts{
		MaxSamples:               50_000_000,
		Timeout:                  2 * time.Minute,
		EnableAtModifier:         true,
		EnableNegativeOffset:     true,
		NoStepSubqueryIntervalFn: func(int64) int64 { return time.Minute.Milliseconds() },
		Parser:                   promqlParser,
	})
}

// loadGroups loads the rule files with Prometheus' rule manager and returns
// their groups in file order, then in each file's order, the order
// Prometheus evaluates them when they depend on each other's records.
func loadGroups(ctx context.Context, db storage.Storage, engine *promql.Engine, interval time.Duration, external labels.Labels, files []string, stderr io.Writer) ([]*rules.Group, error) {
	logger := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelError}))
	m := rules.NewManager(&rules.ManagerOptions{
		QueryFunc:    rules.EngineQueryFunc(engine, db),
		AppendableV2: db,
		Queryable:    db,
		Context:      ctx,
		NotifyFunc:   func(context.Context, string, ...*rules.Alert) {},
		Logger:       logger,
		GroupLoader:  groupLoader{logger: logger},
		Parser:       promqlParser,
	})
	byKey, errs := m.LoadGroups(interval, external, "", nil, false, files...)
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	var groups []*rules.Group
	for _, file := range files {
		rgs, errs := loadRules(file, logger)
		if len(errs) > 0 {
			return nil, errors.Join(errs...)
		}
		for _, rg := range rgs.Groups {
			if g, ok := byKey[rules.GroupKey(file, rg.Name)]; ok && !slices.Contains(groups, g) {
				groups = append(groups, g)
			}
		}
	}
	if len(groups) != len(byKey) {
		return nil, fmt.Errorf("loaded %d rule groups, ordered %d: a group name repeats", len(byKey), len(groups))
	}
	return groups, nil
}

// appendExposition parses one text exposition as a scrape would and
// appends its samples at ts with the target's labels, plus up=1. As with
// honor_labels false, an exposed label that the target also sets is kept as
// exported_NAME.
func appendExposition(app storage.AppenderV2, t target, ts time.Time, stdin io.Reader) ([]labels.Labels, error) {
	var data []byte
	var err error
	if t.file == "-" {
		data, err = io.ReadAll(stdin)
	} else {
		data, err = os.ReadFile(t.file)
	}
	if err != nil {
		return nil, err
	}
	var written []labels.Labels
	p := textparse.NewPromParser(data, labels.NewSymbolTable(), false)
	for {
		e, err := p.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %w", t.file, err)
		}
		if e != textparse.EntrySeries {
			continue
		}
		var exposed labels.Labels
		p.Labels(&exposed)
		_, _, v := p.Series()
		ls := withTarget(exposed, t.labels)
		if _, err := app.Append(0, ls, 0, ts.UnixMilli(), v, nil, nil, storage.AppendV2Options{}); err != nil {
			return nil, fmt.Errorf("%s: %s: %w", t.file, exposed, err)
		}
		written = append(written, ls)
	}
	up := upSeries(t.labels)
	if _, err := app.Append(0, up, 0, ts.UnixMilli(), 1, nil, nil, storage.AppendV2Options{}); err != nil {
		return nil, err
	}
	return append(written, up), nil
}

func withTarget(exposed, target labels.Labels) labels.Labels {
	b := labels.NewBuilder(exposed)
	target.Range(func(l labels.Label) {
		if v := exposed.Get(l.Name); v != "" {
			b.Set("exported_"+l.Name, v)
		}
		b.Set(l.Name, l.Value)
	})
	return b.Labels()
}

func upSeries(target labels.Labels) labels.Labels {
	b := labels.NewBuilder(target)
	b.Set(model.MetricNameLabel, "up")
	return b.Labels()
}

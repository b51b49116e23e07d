package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/prometheus/common/model"
	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/promql"
	"github.com/prometheus/prometheus/rules"
	"github.com/prometheus/prometheus/storage"
	"github.com/prometheus/prometheus/util/teststorage"
	"go.yaml.in/yaml/v3"
)

// Query is one expression to evaluate. Fields other than expr (a
// dashboard's title, a panel's title, a refId) are passed through to the
// answer unchanged, so that a failure names its panel.
type Query map[string]any

// EvalResult is what `promrules eval` prints.
type EvalResult struct {
	At time.Time `json:"at"`
	// Results has one entry per query, in input order: the query's own
	// fields, and samples, the number of samples the expression returned
	// that are not NaN (a range query's graph and a stat panel show those;
	// NaN is what histogram_quantile returns without traffic).
	Results []Query `json:"results"`
	// NoData lists the expressions that returned no sample, or only NaN:
	// the panels that would show "No data".
	NoData []string `json:"noData"`
}

// seriesFile is the part of a promtool test group that `eval -series`
// reads: the input series and their interval.
type seriesFile struct {
	Interval    model.Duration `yaml:"interval"`
	InputSeries []inputSeries  `yaml:"input_series"`
}

// evalArgs are the flags and rule files of `promrules eval`.
type evalArgs struct {
	scrapes   scrapeFlags
	series    string
	queries   string
	at        string
	interval  time.Duration
	ruleFiles []string
}

// evalQueries evaluates PromQL expressions with Prometheus' engine, after
// the rule files' groups have written their records, on scraped metrics
// (the flags of conditions) or on series in the format of a promtool test
// group, and says which returned no data. The exit code is 1 when any did.
func evalQueries(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	ea, code := parseEvalArgs(args, stderr)
	if ea == nil {
		return code
	}
	qs, err := readQueries(ea.queries, stdin)
	if err != nil {
		fmt.Fprintln(stderr, err)
		return 2
	}
	var res *EvalResult
	if ea.series != "" {
		d := time.Hour
		if ea.at != "" {
			md, err := model.ParseDuration(ea.at)
			if err != nil {
				fmt.Fprintln(stderr, "-at:", err)
				return 2
			}
			d = time.Duration(md)
		}
		res, err = evalOnSeries(ea.series, d, ea.interval, ea.ruleFiles, qs, stderr)
	} else {
		ts := time.Now()
		if ea.at != "" {
			if ts, err = parseTime(ea.at); err != nil {
				fmt.Fprintln(stderr, "-at:", err)
				return 2
			}
		}
		res, err = evalOnScrapes(ts.Truncate(time.Millisecond), ea.interval, ea.scrapes, ea.ruleFiles, qs, stderr)
	}
	if err != nil {
		fmt.Fprintln(stderr, err)
		return 1
	}
	if code := writeJSON(res, stdout, stderr); code != 0 {
		return code
	}
	if len(res.NoData) > 0 {
		return 1
	}
	return 0
}

// parseEvalArgs parses and checks eval's command line; on a usage error it
// returns nil and the exit code.
func parseEvalArgs(args []string, stderr io.Writer) (*evalArgs, int) {
	fs := flag.NewFlagSet("eval", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var ea evalArgs
	ea.scrapes.bind(fs, "an exposition `FILE[,NAME=VALUE...]` scraped at the evaluation time, with its target's labels; repeatable")
	fs.StringVar(&ea.series, "series", "", "a YAML `FILE` with interval and input_series, as in a test group of `promtool test rules`, instead of -metrics")
	fs.StringVar(&ea.queries, "queries", "-", "a JSON `FILE` with an array of objects, each with an expr; - is stdin")
	fs.StringVar(&ea.at, "at", "", "evaluation time: with -metrics RFC 3339 or Unix seconds (default now); with -series a duration since the first sample (default 1h)")
	fs.DurationVar(&ea.interval, "interval", 30*time.Second, "scrape interval between -before and -metrics, and the rule evaluation interval with -series")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: promrules eval [flags] [RULEFILE...] < queries.json")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return nil, 2
	}
	ea.ruleFiles = fs.Args()
	sc := ea.scrapes
	if (ea.series == "") == (len(sc.current) == 0) {
		fmt.Fprintln(stderr, "eval needs either -series or at least one -metrics")
		return nil, 2
	}
	if ea.series != "" && (len(sc.before) > 0 || len(sc.down) > 0) {
		fmt.Fprintln(stderr, "-before and -down go with -metrics, not with -series")
		return nil, 2
	}
	for _, t := range slices.Concat(sc.current, sc.before) {
		if t.file == "-" {
			fmt.Fprintln(stderr, "-metrics and -before need files: stdin holds the queries")
			return nil, 2
		}
	}
	return &ea, 0
}

func readQueries(file string, stdin io.Reader) ([]Query, error) {
	var data []byte
	var err error
	if file == "-" {
		data, err = io.ReadAll(stdin)
	} else {
		data, err = os.ReadFile(file)
	}
	if err != nil {
		return nil, err
	}
	var qs []Query
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	if err := dec.Decode(&qs); err != nil {
		return nil, fmt.Errorf("queries: %w", err)
	}
	if len(qs) == 0 {
		return nil, errors.New("queries: none given")
	}
	for i, q := range qs {
		if e, _ := q["expr"].(string); strings.TrimSpace(e) == "" {
			return nil, fmt.Errorf("queries: entry %d has no expr", i)
		}
	}
	return qs, nil
}

// evalOnScrapes loads the scrapes at ts, evaluates the rule groups once
// there, and then the queries.
func evalOnScrapes(ts time.Time, interval time.Duration, sc scrapeFlags, ruleFiles []string, qs []Query, stderr io.Writer) (*EvalResult, error) {
	var res *EvalResult
	err := withScrapes(ts, interval, sc, nil, func(ctx context.Context, db *teststorage.TestStorage) error {
		engine := newEngine()
		if len(ruleFiles) > 0 {
			groups, err := loadGroups(ctx, db, engine, time.Minute, labels.EmptyLabels(), ruleFiles, stderr)
			if err != nil {
				return err
			}
			if err := evalGroups(ctx, groups, ts); err != nil {
				return err
			}
		}
		var err error
		res, err = runQueries(ctx, engine, db, ts, qs)
		return err
	})
	return res, err
}

// evalOnSeries loads the series as `promtool test rules` does, evaluates
// the rule groups at every interval from the first sample up to at, as a
// running Prometheus would have, and then the queries at at.
func evalOnSeries(file string, at, interval time.Duration, ruleFiles []string, qs []Query, stderr io.Writer) (res *EvalResult, err error) {
	sf, err := readSeriesFile(file)
	if err != nil {
		return nil, err
	}
	suite, err := loadSeries(sf.Interval, sf.InputSeries, interval)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	defer func() {
		if cerr := suite.Close(); cerr != nil && err == nil {
			err = cerr
		}
	}()
	var groups []*rules.Group
	if len(ruleFiles) > 0 {
		if groups, err = loadGroups(suite.Context(), suite.Storage(), suite.QueryEngine(), interval, labels.EmptyLabels(), ruleFiles, stderr); err != nil {
			return nil, err
		}
	}
	if err := stepRules(suite, groups, interval, at, nil); err != nil {
		return nil, err
	}
	return runQueries(suite.Context(), suite.QueryEngine(), suite.Queryable(), seriesStart.Add(at), qs)
}

// readSeriesFile reads the input series of `eval -series`; the interval
// defaults to a minute, as in promtool.
func readSeriesFile(file string) (*seriesFile, error) {
	data, err := os.ReadFile(file)
	if err != nil {
		return nil, err
	}
	var sf seriesFile
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	if err := dec.Decode(&sf); err != nil {
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	if len(sf.InputSeries) == 0 {
		return nil, fmt.Errorf("%s: no input_series", file)
	}
	if sf.Interval == 0 {
		sf.Interval = model.Duration(time.Minute)
	}
	return &sf, nil
}

// runQueries evaluates each query at ts as an instant query, the way a
// stat panel asks and the last point of a graph is computed.
func runQueries(ctx context.Context, engine *promql.Engine, q storage.Queryable, ts time.Time, qs []Query) (*EvalResult, error) {
	res := &EvalResult{At: ts.UTC(), Results: []Query{}, NoData: []string{}}
	for _, in := range qs {
		expr := in["expr"].(string)
		out := Query{}
		for k, v := range in {
			out[k] = v
		}
		n, err := samples(ctx, engine, q, expr, ts)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", describe(in), err)
		}
		out["samples"] = n
		res.Results = append(res.Results, out)
		if n == 0 {
			res.NoData = append(res.NoData, expr)
		}
	}
	return res, nil
}

func samples(ctx context.Context, engine *promql.Engine, q storage.Queryable, expr string, ts time.Time) (int, error) {
	qry, err := engine.NewInstantQuery(ctx, q, nil, expr, ts)
	if err != nil {
		return 0, err
	}
	defer qry.Close()
	r := qry.Exec(ctx)
	if r.Err != nil {
		return 0, r.Err
	}
	n := 0
	switch v := r.Value.(type) {
	case promql.Vector:
		for _, s := range v {
			if s.H != nil || !math.IsNaN(s.F) {
				n++
			}
		}
	case promql.Scalar:
		if !math.IsNaN(v.V) {
			n++
		}
	default:
		return 0, fmt.Errorf("the result is a %s, not a vector or scalar", r.Value.Type())
	}
	return n, nil
}

// describe names a query by its fields other than expr, for errors.
func describe(q Query) string {
	var parts []string
	for _, k := range []string{"dashboard", "panel", "refId"} {
		if v, ok := q[k]; ok {
			parts = append(parts, fmt.Sprintf("%s %v", k, v))
		}
	}
	parts = append(parts, fmt.Sprintf("expr %q", q["expr"]))
	return strings.Join(parts, ", ")
}

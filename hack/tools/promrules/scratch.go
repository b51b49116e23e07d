package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/prometheus/common/model"
	"github.com/prometheus/prometheus/promql/promqltest"
	"github.com/prometheus/prometheus/rules"
	"github.com/prometheus/prometheus/util/teststorage"
)

// The two places conditions, eval and test keep series: a scratch database
// of scraped expositions at one instant, and the lazy loader of promtool's
// input series.

// withScrapes writes the scrapes into a scratch database at ts and calls fn
// with it. The database lives in a temporary directory: Close removes it,
// and its error cannot change the answer.
func withScrapes(ts time.Time, interval time.Duration, sc scrapeFlags, stdin io.Reader, fn func(context.Context, *teststorage.TestStorage) error) error {
	db, err := teststorage.NewWithError()
	if err != nil {
		return err
	}
	defer func() { _ = db.Close() }()
	ctx := context.Background()
	if err := appendScrapes(ctx, db, ts, interval, sc.current, sc.before, sc.down, stdin); err != nil {
		return err
	}
	return fn(ctx, db)
}

// seriesStart is time 0 of input series, as promtool has it.
var seriesStart = time.Unix(0, 0).UTC()

// loadSeries returns the lazy loader of input series sampled every
// interval, as `promtool test rules` loads them; subqueries without a step
// use subqueryInterval.
func loadSeries(interval model.Duration, series []inputSeries, subqueryInterval time.Duration) (*promqltest.LazyLoader, error) {
	var load strings.Builder
	fmt.Fprintf(&load, "load %s\n", time.Duration(interval))
	for _, s := range series {
		fmt.Fprintf(&load, "  %s %s\n", s.Series, s.Values)
	}
	suite, err := promqltest.NewLazyLoader(load.String(), promqltest.LazyLoaderOpts{
		EnableAtModifier:     true,
		EnableNegativeOffset: true,
		Parser:               promqlParser,
	})
	if err != nil {
		return nil, err
	}
	suite.SubqueryInterval = subqueryInterval
	return suite, nil
}

// stepRules evaluates the groups at every step from time 0 up to until, as
// a running Prometheus would have, with the series loaded up to each step,
// and calls after with each step's time once its evaluation succeeded.
func stepRules(suite *promqltest.LazyLoader, groups []*rules.Group, step, until time.Duration, after func(ts time.Time)) error {
	for ts := seriesStart; !ts.After(seriesStart.Add(until)); ts = ts.Add(step) {
		var evalErr error
		suite.WithSamplesTill(ts, func(err error) {
			if err == nil {
				err = evalGroups(suite.Context(), groups, ts)
			}
			evalErr = err
		})
		if evalErr != nil {
			return fmt.Errorf("time %s: %w", ts.Sub(seriesStart), evalErr)
		}
		if after != nil {
			after(ts)
		}
	}
	return nil
}

// evalGroups evaluates each group once at ts, in order, and returns the
// rules' errors.
func evalGroups(ctx context.Context, groups []*rules.Group, ts time.Time) error {
	var errs []error
	for _, g := range groups {
		g.Eval(ctx, ts)
		for _, r := range g.Rules() {
			if r.LastError() != nil {
				errs = append(errs, fmt.Errorf("group %q, rule %s: %w", g.Name(), r.Name(), r.LastError()))
			}
		}
	}
	return errors.Join(errs...)
}

package cost

import (
	"sort"
	"strings"
	"time"
)

// ResultIncomplete is the result of a test or package whose stream ended
// before its pass, fail or skip event: the binary crashed, timed out or
// was interrupted.
const ResultIncomplete = "incomplete"

// Interval is a stretch of wall time, From inclusive, To exclusive.
type Interval struct {
	From, To time.Time
}

// Seconds is the length of the interval.
func (iv Interval) Seconds() float64 { return iv.To.Sub(iv.From).Seconds() }

// Span is one top-level test, or one package when Test is empty, from its
// run (start) event to its pass, fail or skip event.
type Span struct {
	Package, Test, Result string
	Interval
}

// spanKey names a span while it is open.
type spanKey struct{ pkg, test string }

// Spans returns the top-level tests and the packages of an event stream,
// each in the order it started. Subtests are part of their top-level test.
// A test run again (-count) is a span of its own each time. A span the
// stream never ends ends with the last event of its package and is
// ResultIncomplete.
func Spans(events []Event) (tests, packages []Span) {
	open := map[spanKey][]int{}
	pkgIndex := map[string]int{}
	last := map[string]time.Time{}
	for _, e := range events {
		if e.Package == "" {
			continue
		}
		last[e.Package] = e.Time
		if _, ok := pkgIndex[e.Package]; !ok {
			// The first event of a package is its start event; older
			// streams have none, and the first event is the best bound.
			pkgIndex[e.Package] = len(packages)
			packages = append(packages, Span{Package: e.Package, Result: ResultIncomplete, Interval: Interval{From: e.Time}})
		}
		if e.Test == "" && isEnd(e.Action) {
			p := &packages[pkgIndex[e.Package]]
			p.Result, p.To = e.Action, e.Time
			continue
		}
		if e.Test == "" || strings.Contains(e.Test, "/") {
			continue
		}
		k := spanKey{e.Package, e.Test}
		if e.Action == ActionRun {
			open[k] = append(open[k], len(tests))
			tests = append(tests, Span{Package: e.Package, Test: e.Test, Result: ResultIncomplete, Interval: Interval{From: e.Time}})
		} else if n := len(open[k]); n > 0 && isEnd(e.Action) {
			t := &tests[open[k][n-1]]
			t.Result, t.To = e.Action, e.Time
			open[k] = open[k][:n-1]
		}
	}
	closeOpen(tests, last)
	closeOpen(packages, last)
	return tests, packages
}

func isEnd(action string) bool {
	return action == ActionPass || action == ActionFail || action == ActionSkip
}

// closeOpen ends every span still open at the last event of its package.
func closeOpen(spans []Span, last map[string]time.Time) {
	for i := range spans {
		if spans[i].Result == ResultIncomplete {
			spans[i].To = last[spans[i].Package]
		}
	}
}

// Uncovered returns the parts of within that none of covered covers, in
// order: a package's time outside its top-level tests.
func Uncovered(within Interval, covered []Interval) []Interval {
	sorted := append([]Interval(nil), covered...)
	sort.Slice(sorted, func(i, j int) bool { return sorted[i].From.Before(sorted[j].From) })
	if !within.To.After(within.From) {
		return nil
	}
	var out []Interval
	cursor := within.From
	for _, c := range sorted {
		if !c.To.After(cursor) {
			continue
		}
		if c.From.After(cursor) {
			out = append(out, Interval{From: cursor, To: earliest(c.From, within.To)})
		}
		cursor = c.To
		if !cursor.Before(within.To) {
			return out
		}
	}
	if within.To.After(cursor) {
		out = append(out, Interval{From: cursor, To: within.To})
	}
	return out
}

func earliest(a, b time.Time) time.Time {
	if a.Before(b) {
		return a
	}
	return b
}

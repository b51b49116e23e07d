package main

import (
	"strings"
	"testing"
)

// queries is the JSON of eval's queries, one per expression, each named by
// a panel field that the answer must carry through.
func queries(exprs ...string) string {
	var b strings.Builder
	b.WriteString("[")
	for i, e := range exprs {
		if i > 0 {
			b.WriteString(",")
		}
		b.WriteString(`{"panel":"p` + itoa(i) + `","expr":` + strconvQuote(e) + `}`)
	}
	b.WriteString("]")
	return b.String()
}

func TestEvalOnSeriesFindsRecordsAndReportsNoData(t *testing.T) {
	// At 10m the counter is 10: the record holds it, and nothing has a
	// job "b".
	code, stdout, stderr := promrules(t, queries(`job:errors:sum{job="a"} == 10`, `errors_total{job="b"}`),
		"eval", "-series", testdata("series.yaml"), "-at", "10m", "-interval", "1m", testdata("rules.yaml"))
	if code != 1 {
		t.Fatalf("exit %d, want 1 (one query without data):\n%s", code, stderr)
	}
	var res EvalResult
	decodeJSON(t, stdout, &res)
	if want := []string{`errors_total{job="b"}`}; !equalJSON(t, res.NoData, want) {
		t.Errorf("noData = %q, want %q", res.NoData, want)
	}
	if len(res.Results) != 2 || res.Results[0]["panel"] != "p0" || res.Results[0]["samples"] != float64(1) || res.Results[1]["samples"] != float64(0) {
		t.Errorf("results = %v, want p0 with 1 sample and p1 with none", res.Results)
	}
}

func TestEvalOnScrapesSeesRatesStalenessAndTargetLabels(t *testing.T) {
	code, stdout, stderr := promrules(t, queries(
		`increase(errors_total{job="app"}[1m]) > 0`, // from 1 before to 7 now
		`info{job="app",exported_job="exposed"}`,    // honor_labels false
		`job:errors:sum{job="app"} == 7`,            // the record, after the rules
		`up{job="gone"} == 0`,                       // the target that was down
		`dropped`,                                   // gone from the current scrape: stale
	), "eval", "-at", "1700000000", "-interval", "30s",
		"-metrics", testdata("metrics.txt")+",job=app", "-before", testdata("metrics-before.txt")+",job=app",
		"-down", "job=gone", testdata("rules.yaml"))
	if code != 1 {
		t.Fatalf("exit %d, want 1 (the stale series):\n%s", code, stderr)
	}
	var res EvalResult
	decodeJSON(t, stdout, &res)
	if want := []string{"dropped"}; !equalJSON(t, res.NoData, want) {
		t.Errorf("noData = %q, want %q (results %v)", res.NoData, want, res.Results)
	}
}

func TestEvalRejectsUsageErrors(t *testing.T) {
	for _, tc := range []struct {
		name, stdin string
		args        []string
	}{
		{name: "neither_series_nor_metrics_is_a_usage_error", stdin: queries("up"), args: []string{"eval"}},
		{name: "both_series_and_metrics_are_a_usage_error", stdin: queries("up"), args: []string{"eval", "-series", testdata("series.yaml"), "-metrics", testdata("metrics.txt")}},
		{name: "before_with_series_is_a_usage_error", stdin: queries("up"), args: []string{"eval", "-series", testdata("series.yaml"), "-before", testdata("metrics.txt")}},
		{name: "metrics_on_stdin_are_a_usage_error", stdin: queries("up"), args: []string{"eval", "-metrics", "-"}},
		{name: "no_queries_are_a_usage_error", stdin: "[]", args: []string{"eval", "-series", testdata("series.yaml")}},
		{name: "query_without_expr_is_a_usage_error", stdin: `[{"panel":"x"}]`, args: []string{"eval", "-series", testdata("series.yaml")}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if code, stdout, _ := promrules(t, tc.stdin, tc.args...); code != 2 || stdout != "" {
				t.Errorf("exit %d with output %q, want 2 and none", code, stdout)
			}
		})
	}
}

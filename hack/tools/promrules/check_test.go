package main

import (
	"strings"
	"testing"
)

func TestCheckAcceptsValidRuleFilesAndPrometheusRules(t *testing.T) {
	for _, tc := range []struct {
		file  string
		rules int
	}{
		{file: "rules.yaml", rules: 3},
		// The ConfigMap in the stream is skipped; the PrometheusRule's
		// spec is the rule file.
		{file: "objects.yaml", rules: 2},
	} {
		t.Run(tc.file, func(t *testing.T) {
			code, stdout, stderr := promrules(t, "", "check", testdata(tc.file))
			if code != 0 {
				t.Fatalf("exit %d, want 0:\n%s", code, stderr)
			}
			if want := "SUCCESS: " + itoa(tc.rules) + " rules found"; !strings.Contains(stdout, want) {
				t.Errorf("stdout lacks %q:\n%s", want, stdout)
			}
		})
	}
}

func TestCheckRejectsBrokenRuleFiles(t *testing.T) {
	for _, tc := range []struct {
		file string
		// want is part of the error the file must be rejected with.
		want string
	}{
		{file: "broken.yaml", want: "Unparsable"},
		{file: "unknown-field.yaml", want: "labes"},
		{file: "duplicate.yaml", want: `duplicate rule "Twice"`},
		{file: "series.yaml", want: "neither a rule file nor a PrometheusRule"},
		{file: "missing.yaml", want: "no such file"},
	} {
		t.Run(tc.file, func(t *testing.T) {
			code, _, stderr := promrules(t, "", "check", testdata("rules.yaml"), testdata(tc.file))
			if code != 1 {
				t.Errorf("exit %d, want 1", code)
			}
			if !strings.Contains(stderr, "FAILED") || !strings.Contains(stderr, tc.want) {
				t.Errorf("stderr lacks FAILED and %q:\n%s", tc.want, stderr)
			}
		})
	}
}

func TestSelectorsNameEachRulesMetricsAndMatchers(t *testing.T) {
	code, stdout, stderr := promrules(t, "", "selectors", testdata("objects.yaml"))
	if code != 0 {
		t.Fatalf("exit %d:\n%s", code, stderr)
	}
	var got []Rule
	decodeJSON(t, stdout, &got)
	want := []Rule{
		{Group: "operator", Alert: "WebhookDown", Expr: `absent(up{job="snatch-webhook"})`,
			Selectors: []Selector{{Metric: "up", Matchers: []Matcher{{Name: "job", Op: "=", Value: "snatch-webhook"}}}}},
		{Group: "operator", Record: "webhook:requests:rate5m", Expr: `sum(rate(requests_total{job="snatch-webhook",code!="200"}[5m]))`,
			Selectors: []Selector{{Metric: "requests_total", Matchers: []Matcher{{Name: "job", Op: "=", Value: "snatch-webhook"}, {Name: "code", Op: "!=", Value: "200"}}}}},
	}
	if !equalJSON(t, got, want) {
		t.Errorf("selectors:\n got %+v\nwant %+v", got, want)
	}
}

func TestSelectorsRejectABrokenFile(t *testing.T) {
	if code, stdout, _ := promrules(t, "", "selectors", testdata("broken.yaml")); code != 1 || stdout != "" {
		t.Errorf("exit %d with output %q, want 1 and none", code, stdout)
	}
}

func TestUsageErrorsExitTwo(t *testing.T) {
	for _, args := range [][]string{{}, {"check"}, {"lint", "x"}} {
		if code, _, stderr := promrules(t, "", args...); code != 2 || !strings.Contains(stderr, "usage:") {
			t.Errorf("%q: exit %d, want 2 and the usage:\n%s", args, code, stderr)
		}
	}
}

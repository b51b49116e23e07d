package main

import (
	"testing"
)

func TestConditionsHoldWhereTheExpressionReturnsSeries(t *testing.T) {
	// 7 errors are more than 5: TooManyErrors holds although its `for` has
	// not passed; the target job=gone was down, so TargetDown holds for it.
	code, stdout, stderr := promrules(t, "", "conditions", "-at", "2023-11-14T22:13:20Z",
		"-metrics", testdata("metrics.txt")+",job=app", "-down", "job=gone", testdata("rules.yaml"))
	if code != 0 {
		t.Fatalf("exit %d:\n%s", code, stderr)
	}
	var got Conditions
	decodeJSON(t, stdout, &got)
	want := Conditions{
		Holding:    []string{"TargetDown", "TooManyErrors"},
		NotHolding: []string{},
		Labels: map[string][]map[string]string{
			"TargetDown":    {{"alertname": "TargetDown", "job": "gone", "severity": "critical"}},
			"TooManyErrors": {{"alertname": "TooManyErrors", "job": "app", "severity": "warning"}},
		},
	}
	got.At = want.At
	if !equalJSON(t, got, want) {
		t.Errorf("conditions:\n got %+v\nwant %+v", got, want)
	}
}

func TestConditionsDoNotHoldOnHealthyMetricsFromStdin(t *testing.T) {
	code, stdout, stderr := promrules(t, "# TYPE errors_total counter\nerrors_total 2\n", "conditions", testdata("rules.yaml"))
	if code != 0 {
		t.Fatalf("exit %d:\n%s", code, stderr)
	}
	var got Conditions
	decodeJSON(t, stdout, &got)
	if len(got.Holding) != 0 || !equalJSON(t, got.NotHolding, []string{"TargetDown", "TooManyErrors"}) {
		t.Errorf("holding %q, not holding %q; want none and both", got.Holding, got.NotHolding)
	}
}

func TestConditionsRejectABrokenRuleFile(t *testing.T) {
	if code, stdout, _ := promrules(t, "", "conditions", "-metrics", testdata("metrics.txt"), testdata("broken.yaml")); code != 1 || stdout != "" {
		t.Errorf("exit %d with output %q, want 1 and none", code, stdout)
	}
}

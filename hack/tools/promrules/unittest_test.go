package main

import (
	"strings"
	"testing"
)

// The series of testdata/unittest-*.yaml grow by one error a minute, so
// TooManyErrors (more than 5, for 2m) holds from 6m and fires from 8m: the
// expectations below follow from the data, not from the runner.

func TestRuleUnitTestPassesWhenFiringAndSilenceAreAsExpected(t *testing.T) {
	code, stdout, stderr := promrules(t, "", "test", testdata("unittest-pass.yaml"))
	if code != 0 {
		t.Fatalf("exit %d, want 0:\n%s%s", code, stdout, stderr)
	}
	if !strings.Contains(stdout, "SUCCESS") {
		t.Errorf("stdout lacks SUCCESS:\n%s", stdout)
	}
}

func TestRuleUnitTestFailsOnEachUnmetExpectation(t *testing.T) {
	code, stdout, stderr := promrules(t, "", "test", testdata("unittest-fail.yaml"))
	if code != 1 {
		t.Fatalf("exit %d, want 1:\n%s%s", code, stdout, stderr)
	}
	if strings.Contains(stdout, "SUCCESS") {
		t.Errorf("a failing file reported SUCCESS:\n%s", stdout)
	}
	for _, want := range []string{
		"alertname: TooManyErrors, time: 5m",
		"got: []",
		`expr: "job:errors:sum", time: 4m`,
		`job="a"} 5]`, // expected
		`job="a"} 4]`, // got
	} {
		if !strings.Contains(stderr, want) {
			t.Errorf("stderr lacks %q:\n%s", want, stderr)
		}
	}
}

func TestRuleUnitTestRejectsAnAlertTheRulesDoNotDefine(t *testing.T) {
	code, _, stderr := promrules(t, "", "test", testdata("unittest-unknown-alert.yaml"))
	if code != 1 || !strings.Contains(stderr, `names alert "TooManyErorrs", which the rule files do not define`) {
		t.Errorf("exit %d, want 1 for the misspelt alert:\n%s", code, stderr)
	}
}

func TestRuleUnitTestRejectsFilesItCannotRun(t *testing.T) {
	for _, tc := range []struct {
		name, file, want string
	}{
		// A rule file is not a test file: its groups field is unknown.
		{name: "unknown_field_fails", file: "rules.yaml", want: "field groups not found"},
		{name: "missing_file_fails", file: "missing.yaml", want: "no such file"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, _, stderr := promrules(t, "", "test", testdata(tc.file))
			if code != 1 || !strings.Contains(stderr, tc.want) {
				t.Errorf("exit %d, want 1 and %q:\n%s", code, tc.want, stderr)
			}
		})
	}
}

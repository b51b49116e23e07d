package check

import (
	"bytes"
	"encoding/json"
	"testing"
)

// reportOf is the report of one check with each of statuses.
func reportOf(statuses ...Status) Report {
	var results []Result
	for _, s := range statuses {
		results = append(results, Result{ID: "x", Status: s})
	}
	return NewReport(results)
}

func TestReportStatusIsTheWorstWithSkipAboveWarn(t *testing.T) {
	tests := []struct {
		name     string
		statuses []Status
		want     Status
		wantExit int
	}{
		{name: "no_checks_pass", want: StatusPass, wantExit: 0},
		{name: "all_pass_passes", statuses: []Status{StatusPass, StatusPass}, want: StatusPass, wantExit: 0},
		{name: "skip_makes_it_incomplete", statuses: []Status{StatusPass, StatusSkip}, want: StatusIncomplete, wantExit: 4},
		{name: "warn_warns", statuses: []Status{StatusPass, StatusWarn}, want: StatusWarn, wantExit: 1},
		{name: "skip_beats_warn", statuses: []Status{StatusPass, StatusWarn, StatusSkip}, want: StatusIncomplete, wantExit: 4},
		{name: "fail_beats_skip", statuses: []Status{StatusSkip, StatusFail, StatusWarn}, want: StatusFail, wantExit: 2},
		{name: "fail_beats_warn", statuses: []Status{StatusFail, StatusWarn}, want: StatusFail, wantExit: 2},
		{name: "warn_after_fail_keeps_fail", statuses: []Status{StatusWarn, StatusFail, StatusWarn}, want: StatusFail, wantExit: 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := reportOf(tt.statuses...)
			if r.Status != tt.want || r.ExitCode() != tt.wantExit {
				t.Errorf("status %s, exit %d; want %s, %d", r.Status, r.ExitCode(), tt.want, tt.wantExit)
			}
		})
	}
}

var sample = NewReport([]Result{
	{ID: IDWebhookPods, Status: StatusPass, Message: "2 of 2 webhook Pods ready"},
	{ID: IDCASecret, Status: StatusFail, Message: "Secret kyma-system/kim-snatch-certificates not found", Remediation: "Check the Certificate."},
	{ID: IDCABundle, Status: StatusSkip, Message: "no usable CA", Remediation: "Fix the check named in the message first."},
	{ID: IDNamespace, Status: StatusWarn, Message: "not sent"},
	{ID: IDPlacement, Status: StatusWarn, Message: "1 lack the term", Remediation: "Restart.", Details: []string{"lacks the term: ns/a", "lacks the term: ns/b"}},
})

func TestWriteTableAlignsOneLinePerCheck(t *testing.T) {
	var buf bytes.Buffer
	if err := sample.WriteTable(&buf, false); err != nil {
		t.Fatal(err)
	}
	want := `ID            STATUS  MESSAGE
webhook-pods  PASS    2 of 2 webhook Pods ready
ca-secret     FAIL    Secret kyma-system/kim-snatch-certificates not found
                      → Check the Certificate.
ca-bundle     SKIP    no usable CA
                      → Fix the check named in the message first.
namespace     WARN    not sent
placement     WARN    1 lack the term
                      → Restart.

Status: FAIL
`
	if buf.String() != want {
		t.Errorf("table:\n%s\nwant:\n%s", buf.String(), want)
	}
}

// -v lists the details under the remediation.
func TestWriteTableVerboseListsTheDetails(t *testing.T) {
	var buf bytes.Buffer
	if err := NewReport(sample.Checks[3:]).WriteTable(&buf, true); err != nil {
		t.Fatal(err)
	}
	want := `ID         STATUS  MESSAGE
namespace  WARN    not sent
placement  WARN    1 lack the term
                   → Restart.
                   - lacks the term: ns/a
                   - lacks the term: ns/b

Status: WARN
`
	if buf.String() != want {
		t.Errorf("table:\n%s\nwant:\n%s", buf.String(), want)
	}
}

func TestWriteJSONKeepsTheV1Schema(t *testing.T) {
	var buf bytes.Buffer
	if err := sample.WriteJSON(&buf); err != nil {
		t.Fatal(err)
	}
	// The shape is a contract: exactly these keys, remediation present
	// even when empty.
	var got struct {
		SchemaVersion string           `json:"schemaVersion"`
		Checks        []map[string]any `json:"checks"`
		Status        string           `json:"status"`
	}
	dec := json.NewDecoder(&buf)
	dec.DisallowUnknownFields()
	if err := dec.Decode(&got); err != nil {
		t.Fatal(err)
	}
	if got.SchemaVersion != "v1" {
		t.Errorf("schemaVersion %q, want v1", got.SchemaVersion)
	}
	if got.Status != "FAIL" || len(got.Checks) != 5 {
		t.Fatalf("got %+v", got)
	}
	first := got.Checks[0]
	if len(first) != 4 || first["id"] != "webhook-pods" || first["status"] != "PASS" || first["message"] != "2 of 2 webhook Pods ready" {
		t.Errorf("first check = %v", first)
	}
	if r, ok := first["remediation"]; !ok || r != "" {
		t.Errorf("remediation of a PASS = %q (present %v), want an empty string", r, ok)
	}
	if got.Checks[1]["remediation"] != "Check the Certificate." {
		t.Errorf("second check = %v", got.Checks[1])
	}
	// details only where there are some.
	if d, ok := got.Checks[4]["details"].([]any); !ok || len(d) != 2 || d[0] != "lacks the term: ns/a" {
		t.Errorf("details of the last check = %v, want its two lines", got.Checks[4]["details"])
	}
}

package check

import (
	"encoding/json"
	"fmt"
	"io"
	"text/tabwriter"
)

// SchemaVersion versions the JSON form of a Report for the tools that read
// `check -o json`. New fields and items keep it; a field renamed, removed
// or given another meaning takes the next version (docs/operations.md).
const SchemaVersion = "v1"

// Report is the outcome of a run: every check in order, and the worst
// status among them.
type Report struct {
	// SchemaVersion is the SchemaVersion the report was written in.
	SchemaVersion string   `json:"schemaVersion"`
	Checks        []Result `json:"checks"`
	// Status is FAIL when a check failed, otherwise INCOMPLETE when one
	// was skipped, otherwise WARN when one warned, otherwise PASS.
	Status Status `json:"status"`
}

// The exit codes of `cabundle-syncer check`. ExitCannotRun is the command's
// own: the checks did not run at all. ExitIncomplete came last, so it has
// the next free number, not one in the order of the statuses.
const (
	ExitPass       = 0
	ExitWarn       = 1
	ExitFail       = 2
	ExitCannotRun  = 3
	ExitIncomplete = 4
)

// rank orders a Report's statuses, worst last; a check's SKIP makes the
// Report INCOMPLETE.
var rank = map[Status]int{StatusPass: 0, StatusWarn: 1, StatusIncomplete: 2, StatusFail: 3}

// exitCodes maps a Report's status to its exit code.
var exitCodes = map[Status]int{StatusPass: ExitPass, StatusWarn: ExitWarn, StatusIncomplete: ExitIncomplete, StatusFail: ExitFail}

// NewReport collects results into a Report.
func NewReport(results []Result) Report {
	status := StatusPass
	for _, r := range results {
		s := r.Status
		if s == StatusSkip {
			s = StatusIncomplete
		}
		if rank[s] > rank[status] {
			status = s
		}
	}
	return Report{SchemaVersion: SchemaVersion, Checks: results, Status: status}
}

// ExitCode maps the report's status to the command's exit code.
func (r Report) ExitCode() int { return exitCodes[r.Status] }

// WriteJSON writes the report as one indented JSON object, with details
// only where a check has some.
func (r Report) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(r)
}

// WriteTable writes the report as an aligned table with the columns ID,
// STATUS and MESSAGE. The remediation of a check that did not pass follows
// on its own line under the message, marked with an arrow; verbose adds
// each check's details under it, one per line, marked with a dash. The
// overall status closes the table.
func (r Report) WriteTable(w io.Writer, verbose bool) error {
	tw := tabwriter.NewWriter(w, 0, 8, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tSTATUS\tMESSAGE")
	for _, c := range r.Checks {
		fmt.Fprintf(tw, "%s\t%s\t%s\n", c.ID, c.Status, c.Message)
		if c.Status != StatusPass && c.Remediation != "" {
			fmt.Fprintf(tw, "\t\t→ %s\n", c.Remediation)
		}
		if verbose {
			for _, d := range c.Details {
				fmt.Fprintf(tw, "\t\t- %s\n", d)
			}
		}
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	_, err := fmt.Fprintf(w, "\nStatus: %s\n", r.Status)
	return err
}

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
	// Status is FAIL when a check failed, otherwise WARN when one warned,
	// otherwise PASS. Skipped checks do not count.
	Status Status `json:"status"`
}

// The exit codes of `cabundle-syncer check`. ExitCannotRun is the command's
// own: the checks did not run at all.
const (
	ExitPass      = 0
	ExitWarn      = 1
	ExitFail      = 2
	ExitCannotRun = 3
)

// exitCodes maps a status to its exit code, which also ranks the statuses;
// PASS and SKIP are ExitPass.
var exitCodes = map[Status]int{StatusWarn: ExitWarn, StatusFail: ExitFail}

// NewReport collects results into a Report.
func NewReport(results []Result) Report {
	status := StatusPass
	for _, r := range results {
		if exitCodes[r.Status] > exitCodes[status] {
			status = r.Status
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

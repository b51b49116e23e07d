package check

import (
	"encoding/json"
	"fmt"
	"io"
	"text/tabwriter"
)

// SchemaVersion versions the JSON form of a Report (docs/operations.md):
// new fields and items keep it; a field renamed, removed or given another
// meaning takes the next version.
const SchemaVersion = "v1"

// Cluster names the cluster a run asked, so that an operator sees that the
// verdict is about the cluster meant: the kubeconfig context (or
// "in-cluster") and the API server's URL.
type Cluster struct {
	Context string `json:"context"`
	Server  string `json:"server"`
}

// Report is the outcome of a run: every check in order and the worst status.
type Report struct {
	SchemaVersion string   `json:"schemaVersion"` // the SchemaVersion it was written in
	Cluster       Cluster  `json:"cluster,omitzero"`
	Checks        []Result `json:"checks"`
	// Status is FAIL when a check failed, otherwise INCOMPLETE when one
	// was skipped, otherwise WARN when one warned, otherwise PASS.
	Status Status `json:"status"`
}

// rank orders the statuses, worst last; a check's SKIP makes the Report INCOMPLETE.
var rank = map[Status]int{StatusPass: 0, StatusWarn: 1, StatusSkip: 2, StatusIncomplete: 2, StatusFail: 3}

// NewReport collects results into a Report.
func NewReport(results []Result) Report {
	status := StatusPass
	for _, r := range results {
		if rank[r.Status] > rank[status] {
			status = r.Status
		}
	}
	if status == StatusSkip {
		status = StatusIncomplete
	}
	return Report{SchemaVersion: SchemaVersion, Checks: results, Status: status}
}

// WriteJSON writes the report as one indented JSON object.
func (r Report) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(r)
}

// WriteTable writes the report as a table of ID, STATUS and MESSAGE, with the
// remediation of a check that did not pass and, verbose, its details under it.
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
	fmt.Fprintln(tw)
	if r.Cluster != (Cluster{}) {
		fmt.Fprintf(tw, "Cluster: context %s, API server %s\n", r.Cluster.Context, r.Cluster.Server)
	}
	fmt.Fprintf(tw, "Status: %s\n", r.Status)
	return tw.Flush()
}

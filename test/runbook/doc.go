// Package runbook reads an alert's runbook from the documents: the section
// under the alert's heading (Section, which the documents' tests use for
// any section), and in it the command blocks after the lines "Confirm:"
// and "Fix:" (docs/operations.md, "Alerts"). The documents' tests hold
// every alert to having both; the end-to-end suite runs them, as written,
// against the breaks that raise the alerts.
package runbook

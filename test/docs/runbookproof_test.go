package docs

import (
	"maps"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// runbookLists are the paragraphs of docs/operations.md ("Alerts") that
// say, for each alert, what proves its runbook's Fix: the table of those
// proven on the node, those whose Fix no test runs, and those not yet
// proven. Each opens with its label and ends at a blank line.
var runbookLists = []string{
	"Runbooks proven on the node:",
	"Runbooks whose Fix no test runs, each saying why:",
	"Runbooks not yet proven on the node,",
}

// quotedAlert is an alert's name as the documents quote it, in code.
var quotedAlert = regexp.MustCompile("`(KimSnatch[A-Za-z]+)`")

// noTestRuns is what a runbook says whose Fix no test runs, before why.
const noTestRuns = "No test runs this Fix:"

// Every alert's runbook is in exactly one of runbookLists, so that what
// proves a Fix on the node, and what does not yet, is stated for each and
// never for an alert that does not exist; a runbook in the second list
// says why no test runs its Fix.
func TestEachRunbookFixIsProvenOrSaysWhyNot(t *testing.T) {
	alerts := alertRunbookURLs(t)
	maps.Copy(alerts, ruleFileAlerts(t, filepath.Join("deploy", "components", "fleet-alerts", "prometheusrule.yaml")))
	d := readDoc(t, "docs/operations.md")
	section := d.section(t, "Alerts")
	in := map[string][]string{} // alert: the lists that name it
	for i, label := range runbookLists {
		start := strings.Index(section, label)
		if start < 0 {
			t.Fatalf("%s, section Alerts, has no paragraph %q", d.path, label)
		}
		list, _, _ := strings.Cut(section[start+len(label):], "\n\n")
		if i == 0 { // the table starts after a blank line
			list, _, _ = strings.Cut(strings.TrimLeft(section[start+len(label):], "\n"), "\n\n")
		}
		for _, m := range quotedAlert.FindAllStringSubmatch(list, -1) {
			if i == 0 && !strings.Contains(list, "| `"+m[1]+"` |") {
				continue // an alert a row names in its notes, not its first column
			}
			if !slices.Contains(in[m[1]], label) {
				in[m[1]] = append(in[m[1]], label)
			}
		}
	}
	for alert, lists := range in {
		if _, ok := alerts[alert]; !ok {
			t.Errorf("%s names %s in %q, which no PrometheusRule of deploy/ defines", d.path, alert, lists)
		}
	}
	for _, alert := range slices.Sorted(maps.Keys(alerts)) {
		switch lists := in[alert]; {
		case len(lists) != 1:
			t.Errorf("%s: %s is in %d of the lists %q, want exactly one", d.path, alert, len(lists), runbookLists)
		case lists[0] == runbookLists[1] && !strings.Contains(d.section(t, alert), noTestRuns):
			t.Errorf("%s: the runbook of %s is in %q but does not say %q and why", d.path, alert, lists[0], noTestRuns)
		}
	}
}

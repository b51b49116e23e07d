// Command dashboards generates the Grafana dashboards of KIM Snatch with
// the Grafana Foundation SDK, lists their queries, and writes the fleet
// records, the fleet alerts and the inhibition rules:
//
//	dashboards generate [-cluster-label LABEL] -o DIR      DIR/NAME.json per dashboard
//	dashboards queries [flags] [FILE...]                   every panel's query as JSON, for `promrules eval`
//	dashboards fleet-rules [-cluster-label LABEL]          the PrometheusRule of deploy/components/fleet
//	dashboards fleet-alerts [-cluster-label LABEL]         the PrometheusRule of deploy/components/fleet-alerts
//	dashboards inhibit-rules [-cluster-label LABEL]        deploy/components/alertmanager/inhibit-rules.yaml
//	dashboards alertmanager-config [-cluster-label LABEL]  deploy/components/alertmanager/alertmanagerconfig.yaml
//
// -cluster-label names the label that tells a fleet's clusters apart
// (cluster by default); without FILEs, queries reads the generated
// dashboards. docs/development.md ("Tools in hack/tools") says why it uses
// the SDK, and which test holds deploy/ to what it generates.
package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

func run(args []string, stdout, stderr io.Writer) int {
	if len(args) < 1 {
		return usage(stderr)
	}
	switch args[0] {
	case "generate":
		return generateCmd(args[1:], stderr)
	case "queries":
		return queriesCmd(args[1:], stdout, stderr)
	case "fleet-rules":
		return fleetRulesCmd(args[1:], stdout, stderr)
	case "fleet-alerts":
		return labelledCmd(args[0], renderFleetAlerts, args[1:], stdout, stderr)
	case "inhibit-rules":
		return labelledCmd(args[0], renderInhibitRules, args[1:], stdout, stderr)
	case "alertmanager-config":
		return labelledCmd(args[0], renderAlertmanagerConfig, args[1:], stdout, stderr)
	default:
		return usage(stderr)
	}
}

func usage(stderr io.Writer) int {
	fmt.Fprintln(stderr, `usage: dashboards generate [-cluster-label LABEL] -o DIR
       dashboards queries [-namespace NS] [-cluster REGEX] [-rate-interval D] [FILE...]
       dashboards fleet-rules [-cluster-label LABEL]
       dashboards fleet-alerts [-cluster-label LABEL]
       dashboards inhibit-rules [-cluster-label LABEL]
       dashboards alertmanager-config [-cluster-label LABEL]`)
	return 2
}

// render builds every dashboard and returns its JSON by file name, indented
// and with a final newline, as the files are committed.
func render(clusterLabel string) (map[string][]byte, []string, error) {
	out := map[string][]byte{}
	var names []string
	for _, b := range boards(clusterLabel) {
		d, err := b.builder.Build()
		if err != nil {
			return nil, nil, fmt.Errorf("%s: %w", b.file, err)
		}
		data, err := json.MarshalIndent(d, "", "  ")
		if err != nil {
			return nil, nil, fmt.Errorf("%s: %w", b.file, err)
		}
		out[b.file] = append(data, '\n')
		names = append(names, b.file)
	}
	return out, names, nil
}

func generateCmd(args []string, stderr io.Writer) int {
	fs := flag.NewFlagSet("generate", flag.ContinueOnError)
	fs.SetOutput(stderr)
	dir := fs.String("o", "", "the `DIR` to write the dashboards to")
	label := clusterLabelFlag(fs)
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if *dir == "" || fs.NArg() > 0 {
		return usage(stderr)
	}
	if err := validLabel(*label); err != nil {
		fmt.Fprintln(stderr, err)
		return 2
	}
	files, names, err := render(*label)
	if err != nil {
		fmt.Fprintln(stderr, err)
		return 1
	}
	for _, name := range names {
		if err := os.WriteFile(filepath.Join(*dir, name), files[name], 0o644); err != nil {
			fmt.Fprintln(stderr, err)
			return 1
		}
	}
	return 0
}

// Query is one target of one panel.
type Query struct {
	Dashboard string `json:"dashboard"`
	Panel     string `json:"panel"`
	RefID     string `json:"refId"`
	// Template is the expression as the dashboard holds it.
	Template string `json:"template"`
	// Expr is Template with its variables substituted.
	Expr string `json:"expr"`
}

func queriesCmd(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("queries", flag.ContinueOnError)
	fs.SetOutput(stderr)
	vars := substitutions{}
	fs.StringVar(&vars.namespace, "namespace", defaultNamespace, "the value of $namespace: the installation's namespace, or a Kyma namespace on the placement dashboard")
	fs.StringVar(&vars.cluster, "cluster", ".*", "the value of $cluster, a regular expression; .* is Grafana's All and matches series without the label")
	fs.StringVar(&vars.rateInterval, "rate-interval", "5m", "the value of $__rate_interval: at least four scrape intervals, as Grafana computes it")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	var sources []namedJSON
	if fs.NArg() == 0 {
		files, names, err := render(defaultClusterLabel)
		if err != nil {
			fmt.Fprintln(stderr, err)
			return 1
		}
		for _, n := range names {
			sources = append(sources, namedJSON{name: n, data: files[n]})
		}
	} else {
		for _, f := range fs.Args() {
			data, err := os.ReadFile(f)
			if err != nil {
				fmt.Fprintln(stderr, err)
				return 1
			}
			sources = append(sources, namedJSON{name: f, data: data})
		}
	}
	out := []Query{}
	for _, s := range sources {
		qs, err := queries(s.data, vars)
		if err != nil {
			fmt.Fprintf(stderr, "%s: %v\n", s.name, err)
			return 1
		}
		out = append(out, qs...)
	}
	enc := json.NewEncoder(stdout)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	if err := enc.Encode(out); err != nil {
		fmt.Fprintln(stderr, err)
		return 1
	}
	return 0
}

type namedJSON struct {
	name string
	data []byte
}

// substitutions are the values of the template variables for evaluation.
type substitutions struct {
	namespace, cluster, rateInterval string
}

var variableRef = regexp.MustCompile(`\$\{(\w+)\}|\$(\w+)`)

func (s substitutions) apply(expr string) (string, error) {
	values := map[string]string{"namespace": s.namespace, "cluster": s.cluster, "__rate_interval": s.rateInterval}
	var missing []string
	out := variableRef.ReplaceAllStringFunc(expr, func(m string) string {
		name := strings.Trim(m, "${}")
		if v, ok := values[name]; ok {
			return v
		}
		missing = append(missing, m)
		return m
	})
	if len(missing) > 0 {
		return "", fmt.Errorf("no value for %s in %q", strings.Join(missing, ", "), expr)
	}
	return out, nil
}

// panelJSON is the part of a dashboard's JSON model that holds queries.
// Rows hold their panels in panels when collapsed.
type panelJSON struct {
	Title   string      `json:"title"`
	Type    string      `json:"type"`
	Panels  []panelJSON `json:"panels"`
	Targets []struct {
		RefID string `json:"refId"`
		Expr  string `json:"expr"`
	} `json:"targets"`
}

// queries lists every panel's targets of one dashboard's JSON model. A
// panel other than a row without a query is an error: it could only ever
// show "No data".
func queries(data []byte, vars substitutions) ([]Query, error) {
	var d struct {
		Title  string      `json:"title"`
		Panels []panelJSON `json:"panels"`
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(&d); err != nil {
		return nil, err
	}
	var out []Query
	var errs []error
	var walk func([]panelJSON)
	walk = func(ps []panelJSON) {
		for _, p := range ps {
			if p.Type == "row" {
				walk(p.Panels)
				continue
			}
			if len(p.Targets) == 0 {
				errs = append(errs, fmt.Errorf("panel %q has no query", p.Title))
			}
			for _, t := range p.Targets {
				expr, err := vars.apply(t.Expr)
				if err != nil {
					errs = append(errs, fmt.Errorf("panel %q: %w", p.Title, err))
					continue
				}
				out = append(out, Query{Dashboard: d.Title, Panel: p.Title, RefID: t.RefID, Template: t.Expr, Expr: expr})
			}
		}
	}
	walk(d.Panels)
	return out, errors.Join(errs...)
}

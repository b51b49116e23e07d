package main

import (
	"bytes"
	_ "embed"
	"flag"
	"fmt"
	"io"
	"text/template"
)

// fleetAlertsTemplate is the PrometheusRule of deploy/components/fleet-alerts
// with the cluster label left open, as in fleetRulesTemplate. Its alerts'
// annotations are Prometheus templates, {{ $value }} and {{ $labels }}, so
// it takes the label as [[.ClusterLabel]].
//
//go:embed fleetalerts.yaml.tmpl
var fleetAlertsTemplate string

var fleetAlerts = template.Must(template.New("fleetalerts").Delims("[[", "]]").Option("missingkey=error").Parse(fleetAlertsTemplate))

// renderFleetAlerts returns the fleet alerts' PrometheusRule with the
// label l.
func renderFleetAlerts(l string) ([]byte, error) {
	var buf bytes.Buffer
	if err := fleetAlerts.Execute(&buf, struct{ ClusterLabel string }{l}); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// labelledCmd runs a command whose one flag is -cluster-label and writes
// what render returns for it to stdout.
func labelledCmd(name string, render func(string) ([]byte, error), args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	label := clusterLabelFlag(fs)
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if fs.NArg() > 0 {
		return usage(stderr)
	}
	if err := validLabel(*label); err != nil {
		fmt.Fprintln(stderr, err)
		return 2
	}
	data, err := render(*label)
	if err == nil {
		_, err = stdout.Write(data)
	}
	if err != nil {
		fmt.Fprintln(stderr, err)
		return 1
	}
	return 0
}

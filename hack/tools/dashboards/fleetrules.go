package main

import (
	"bytes"
	_ "embed"
	"flag"
	"fmt"
	"io"
	"regexp"
	"slices"
	"text/template"
)

// fleetRulesTemplate is the PrometheusRule of deploy/components/fleet with
// the label that tells the clusters apart left open: the records and the
// fleet dashboard take it from the same flag, so that they cannot disagree.
//
//go:embed fleetrules.yaml.tmpl
var fleetRulesTemplate string

var fleetRules = template.Must(template.New("fleetrules").Option("missingkey=error").Parse(fleetRulesTemplate))

// renderFleetRules returns the fleet PrometheusRule with the label l.
func renderFleetRules(l string) ([]byte, error) {
	return execute(fleetRules, struct{ ClusterLabel string }{l})
}

func clusterLabelFlag(fs *flag.FlagSet) *string {
	return fs.String("cluster-label", defaultClusterLabel, "the `LABEL` that tells the clusters of a fleet apart: the fleet records keep it and the fleet dashboard selects by it (Kyma's fleet monitoring: shoot)")
}

var labelName = regexp.MustCompile(`^[a-zA-Z_][a-zA-Z0-9_]*$`)

// otherLabels are the labels the fleet records, alerts, inhibition rules
// and panels read with a meaning of their own: a cluster label of the same
// name would merge them.
var otherLabels = []string{"job", "namespace", "pod", "container", "image", "deployment", "name", "version", "revision", "goversion", "le",
	"alertname", "alertstate", "severity", "webhook_version", "syncer_version"}

// validLabel refuses a name Prometheus would not take as a label, one it
// reserves (__*), and one the records already use for something else.
func validLabel(l string) error {
	switch {
	case !labelName.MatchString(l) || len(l) > 1 && l[:2] == "__":
		return fmt.Errorf("-cluster-label %q: not a label name Prometheus allows for a series", l)
	case slices.Contains(otherLabels, l):
		return fmt.Errorf("-cluster-label %q: the fleet records and panels already read that label with another meaning", l)
	}
	return nil
}

func fleetRulesCmd(args []string, stdout, stderr io.Writer) int {
	return labelledCmd("fleet-rules", renderFleetRules, args, stdout, stderr)
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

// execute renders t with data.
func execute(t *template.Template, data any) ([]byte, error) {
	var buf bytes.Buffer
	if err := t.Execute(&buf, data); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

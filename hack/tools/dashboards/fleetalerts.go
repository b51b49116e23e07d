package main

import (
	_ "embed"
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
	return execute(fleetAlerts, struct{ ClusterLabel string }{l})
}

package e2e

import (
	"context"
	"strings"
	"testing"

	"github.com/kyma-project/kim-snatch/test/e2e/stack"
)

// The breaks of what Prometheus scrapes, done to the suite's Prometheus
// stack (test/e2e/neighbours/monitoring) as a change to an installation's
// monitoring would do them.

// apiserverMonitor is the suite's ServiceMonitor of the kube-apiserver,
// which the API server scraped profile selects.
var apiserverMonitor = []string{"-n", "monitoring", "servicemonitor", "kube-apiserver"}

// dropAdmissionSeries is the metric relabelling that a kube-prometheus-stack
// user might add to save series: it drops every
// apiserver_admission_webhook_* series of the kube-apiserver.
const dropAdmissionSeries = `[{"op": "add", "path": "/spec/endpoints/0/metricRelabelings", "value": ` +
	`[{"action": "drop", "sourceLabels": ["__name__"], "regex": "apiserver_admission_webhook_.*"}]}]`

// undropAdmissionSeries is what the operator does in the editor that the
// runbook's Fix opens: remove the entry, from its key to its last line.
const undropAdmissionSeries = `sed -i -e '/metricRelabelings:/,/- __name__/d'`

// dropAPIServerAdmissionSeries adds dropAdmissionSeries to the kube-apiserver's
// ServiceMonitor, keeping its endpoints to put back.
func dropAPIServerAdmissionSeries(t *testing.T) func(context.Context) error {
	ctx := context.Background()
	kc := sys.KubeconfigPath()
	endpoints, err := stack.Kubectl(ctx, kc, append([]string{"get", "-o", "jsonpath={.spec.endpoints}"}, apiserverMonitor...)...)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(endpoints, "metricRelabelings") {
		t.Fatalf("the ServiceMonitor of the kube-apiserver relabels already: %s", endpoints)
	}
	if _, err := stack.Kubectl(ctx, kc, append([]string{"patch", "--type=json", "-p", dropAdmissionSeries}, apiserverMonitor...)...); err != nil {
		t.Fatal(err)
	}
	return func(ctx context.Context) error {
		_, err := stack.Kubectl(ctx, kc, append([]string{"patch", "--type=merge", "-p", `{"spec":{"endpoints":` + endpoints + `}}`}, apiserverMonitor...)...)
		return err
	}
}

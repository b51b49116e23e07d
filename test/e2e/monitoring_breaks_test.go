package e2e

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/go-openapi/jsonpointer"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kyma-project/kim-snatch/test/e2e/stack"
	"github.com/kyma-project/kim-snatch/test/realnode"
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

// prometheusPolicy is the NetworkPolicy of deploy/components/prometheus,
// which admits the suite's Prometheus Pods to the metrics port of both
// binaries; nothing else admits them (they carry no
// networking.kyma-project.io/metrics-scraping label).
var prometheusPolicy = []string{"-n", stack.Namespace, "networkpolicy", "kim-snatch-prometheus"}

// prometheusBinary is the path of Prometheus in the suite's image
// (hack/tools/imagetool), as its processes' command lines start.
const prometheusBinary = "/bin/prometheus"

// admitPrometheusOnlyTo returns a break that narrows prometheusPolicy to
// the Pods of binary keep, as an overlay's patch that forgets the other
// binary would, so that Prometheus' scrapes of the other's Pods time out.
// kube-network-policies judges new connections only, so the break also
// aborts Prometheus' open connections to those Pods' metrics port, as a
// restart of Prometheus would: its next scrapes connect anew.
func admitPrometheusOnlyTo(keep, cut string) func(t *testing.T) func(context.Context) error {
	return func(t *testing.T) func(context.Context) error {
		ctx := context.Background()
		values, restore := replaceField(t, prometheusPolicy, "/spec/podSelector/matchExpressions/0/values", fmt.Sprintf("[%q]", keep))
		if !strings.Contains(values, cut) {
			_ = restore(ctx)
			t.Fatalf("NetworkPolicy %s did not admit Prometheus to %s: %s", prometheusPolicy[3], cut, values)
		}
		if err := abortScrapes(ctx, cut); err != nil {
			_ = restore(ctx)
			t.Fatal(err)
		}
		return restore
	}
}

// abortScrapes aborts the connections of each Prometheus on this host to
// the metrics port of each Pod of binary name.
func abortScrapes(ctx context.Context, name string) error {
	pods, err := sys.Clientset().CoreV1().Pods(stack.Namespace).List(ctx, metav1.ListOptions{LabelSelector: "app.kubernetes.io/name=" + name})
	if err != nil {
		return err
	}
	proms := processesOf(prometheusBinary)
	if len(pods.Items) == 0 || len(proms) != len(stack.Profiles) {
		return fmt.Errorf("%d Pods of %s in %s, %d Prometheus processes on this host (want %d)",
			len(pods.Items), name, stack.Namespace, len(proms), len(stack.Profiles))
	}
	for _, pid := range proms {
		for _, p := range pods.Items {
			if err := realnode.AbortConnections(pid, p.Status.PodIP, metricsPort); err != nil {
				return fmt.Errorf("prometheus %s, pod %s: %w", pid, p.Name, err)
			}
		}
	}
	return nil
}

// kubeStateMetricsBinary is the path of the kube-state-metrics stand-in in
// its image (Makefile, monitoring-images), as its process' command line
// starts.
const kubeStateMetricsBinary = "/kube-state-metrics"

// hangKubeStateMetrics stops the kube-state-metrics process on this host
// (SIGSTOP), as a process that hangs stops: its Pod stays Running, its
// readiness probe fails and Prometheus' scrapes time out. The stand-in, as
// the suite runs it, has no liveness probe that would restart it. Restoring
// continues it.
func hangKubeStateMetrics(t *testing.T) func(context.Context) error {
	pids := processesOf(kubeStateMetricsBinary)
	if len(pids) != 1 {
		t.Fatalf("%d kube-state-metrics processes on this host (%v), want 1", len(pids), pids)
	}
	pid, err := strconv.Atoi(pids[0])
	if err != nil {
		t.Fatal(err)
	}
	if err := syscall.Kill(pid, syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	return func(context.Context) error {
		// A Fix that restarted it leaves no process to continue.
		if err := syscall.Kill(pid, syscall.SIGCONT); err != nil && !errors.Is(err, syscall.ESRCH) {
			return err
		}
		return nil
	}
}

// ksmDeployment is the suite's kube-state-metrics Deployment
// (test/e2e/neighbours/monitoring).
var ksmDeployment = []string{"-n", "monitoring", "deployment", "kube-state-metrics"}

// ownAllowlist is a label allowlist of an installation's own, from before
// KIM Snatch: the Pods' opt-out label, none of the Nodes and Namespaces.
const ownAllowlist = "pods=[kim-snatch.kyma-project.io/opt-out]"

// allowlistOfItsOwn gives kube-state-metrics ownAllowlist, as a
// configuration that predates KIM Snatch, or an upgrade that replaced its
// arguments, leaves it, and waits for its rollout. Restoring puts the
// arguments back.
func allowlistOfItsOwn(t *testing.T) func(context.Context) error {
	own := fmt.Sprintf(`[%q, "--metric-opt-in-list=kube_pod_nodeselectors"]`, "--metric-labels-allowlist="+ownAllowlist)
	_, restore := replaceField(t, ksmDeployment, "/spec/template/spec/containers/0/args", own)
	rolledOut := func(ctx context.Context) error {
		_, err := stack.Kubectl(ctx, sys.KubeconfigPath(), "-n", "monitoring", "rollout", "status", "deployment/kube-state-metrics", "--timeout=2m")
		return err
	}
	if err := rolledOut(context.Background()); err != nil {
		_ = restore(context.Background())
		t.Fatal(err)
	}
	return func(ctx context.Context) error { return errors.Join(restore(ctx), rolledOut(ctx)) }
}

// replaceField replaces the value at path, a JSON pointer, of object with
// value, a JSON document, and returns the value it had, in JSON, and what
// puts that back.
func replaceField(t *testing.T, object []string, path, value string) (was string, restore func(context.Context) error) {
	t.Helper()
	ctx := context.Background()
	kc := sys.KubeconfigPath()
	doc, err := stack.Kubectl(ctx, kc, append([]string{"get", "-o", "json"}, object...)...)
	if err != nil {
		t.Fatal(err)
	}
	was = fieldAt(t, doc, path)
	set := func(ctx context.Context, value string) error {
		patch := `[{"op": "replace", "path": "` + path + `", "value": ` + value + `}]`
		_, err := stack.Kubectl(ctx, kc, append([]string{"patch", "--type=json", "-p", patch}, object...)...)
		return err
	}
	if err := set(ctx, value); err != nil {
		t.Fatal(err)
	}
	return was, func(ctx context.Context) error { return set(ctx, was) }
}

// fieldAt returns the value at path, a JSON pointer, of the JSON document
// doc, in JSON.
func fieldAt(t *testing.T, doc, path string) string {
	t.Helper()
	var obj any
	if err := json.Unmarshal([]byte(doc), &obj); err != nil {
		t.Fatal(err)
	}
	p, err := jsonpointer.New(path)
	if err != nil {
		t.Fatal(err)
	}
	v, _, err := p.Get(obj)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

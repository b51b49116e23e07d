package e2e

import (
	"bytes"
	"context"
	"errors"
	"io"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	promv1 "github.com/prometheus/client_golang/api/prometheus/v1"
	"github.com/prometheus/common/model"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/wait"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"

	"github.com/kyma-project/kim-snatch/test/e2e/stack"
	"github.com/kyma-project/kim-snatch/test/framework"
)

// The Prometheus stack of test/e2e/neighbours/monitoring, on the real
// node: prometheus-operator reads the shipped ServiceMonitors and
// PrometheusRules, Prometheus scrapes both binaries over the Pod network
// through the shipped NetworkPolicies, under Kyma's deny-all, and sends its
// alerts to Alertmanager, whose receiver is the suite.

// monitored returns the Prometheus API and the alert receiver, or skips t
// where the suite does not run the stack.
func monitored(t *testing.T) (promv1.API, *stack.AlertReceiver) {
	t.Helper()
	ns, ok := sys.(*nodeSystem)
	if !ok {
		t.Skipf("%T runs no Prometheus stack", sys)
	}
	prom, err := stack.Prometheus(t.Context(), sys.Clientset())
	if err != nil {
		t.Fatal(err)
	}
	return prom, ns.alerts
}

// Every running replica of both binaries is a target of the job its
// ServiceMonitor names, and up.
func TestPrometheusScrapesEveryReplicaThroughTheShippedServiceMonitors(t *testing.T) {
	prom, _ := monitored(t)
	want := map[string]string{} // pod -> job
	for _, app := range []string{stack.WebhookName, stack.SyncerName} {
		pods := runningPods(t, app)
		if len(pods) == 0 {
			t.Fatalf("no running %s replica to be scraped", app)
		}
		for _, p := range pods {
			want[p.Name] = app + "-metrics"
		}
	}
	var got map[string]string
	err := wait.PollUntilContextTimeout(t.Context(), 2*time.Second, 2*time.Minute, true, func(ctx context.Context) (bool, error) {
		v, err := queryVector(ctx, prom, `up{namespace="`+stack.Namespace+`"} == 1`)
		if err != nil {
			return false, nil
		}
		got = map[string]string{}
		for _, s := range v {
			got[string(s.Metric["pod"])] = string(s.Metric["job"])
		}
		for pod, job := range want {
			if got[pod] != job {
				return false, nil
			}
		}
		return true, nil
	})
	if err != nil {
		t.Errorf("targets up in %s: %v, want every replica %v", stack.Namespace, got, want)
	}
	logf("monitoring: Prometheus scrapes %d replicas, all up: %v", len(want), got)
}

// Prometheus loaded every rule of the shipped PrometheusRules, and the
// fleet component's, and evaluates each without error.
func TestPrometheusLoadsEveryShippedRule(t *testing.T) {
	prom, _ := monitored(t)
	want := shippedRuleNames(t)
	var got []string
	var bad []string
	err := wait.PollUntilContextTimeout(t.Context(), 2*time.Second, 2*time.Minute, true, func(ctx context.Context) (bool, error) {
		res, err := prom.Rules(ctx, nil)
		if err != nil {
			return false, nil
		}
		got, bad = got[:0], bad[:0]
		for _, g := range res.Groups {
			for _, r := range g.Rules {
				name, health, lastErr := ruleState(r)
				got = append(got, name)
				if health != promv1.RuleHealthGood {
					bad = append(bad, name+" ("+string(health)+": "+lastErr+")")
				}
			}
		}
		slices.Sort(got)
		return slices.Equal(got, want) && len(bad) == 0, nil
	})
	if err != nil {
		t.Errorf("Prometheus has the rules %v, want %v; not healthy: %v", got, want, bad)
	}
	logf("monitoring: Prometheus evaluates all %d shipped rules", len(want))
}

// An alert of a break reaches Alertmanager: with the caBundle wiped while
// the leader may not write it, KimSnatchCABundleOutOfSync fires in
// Prometheus after its `for`, and Alertmanager sends it to the receiver
// with its severity and runbook; after the repair it is resolved.
func TestAnAlertOfABreakReachesAlertmanager(t *testing.T) {
	prom, receiver := monitored(t)
	const alert = "KimSnatchCABundleOutOfSync"
	broken := time.Now()
	restore := wipeCABundleWithoutPatch(t)
	restored := false
	t.Cleanup(func() {
		if !restored {
			_ = restore(context.Background())
		}
	})
	firing := waitFor(t, 6*time.Minute, "Prometheus fires "+alert, func(ctx context.Context) bool {
		names, err := stack.Firing(ctx, prom)
		return err == nil && slices.Contains(names, alert)
	})
	n, received := waitNotification(t, receiver, broken, alert, "firing")
	logf("monitoring: %s firing %s after the break, received by the suite from Alertmanager %s after it",
		alert, firing.Sub(broken).Round(time.Second), received.Sub(broken).Round(time.Second))
	if n.Labels["severity"] != "critical" || !strings.Contains(n.Annotations["runbook_url"], "#"+strings.ToLower(alert)) {
		t.Errorf("notification of %s: severity %q, runbook_url %q", alert, n.Labels["severity"], n.Annotations["runbook_url"])
	}
	if err := restore(context.Background()); err != nil {
		t.Fatal(err)
	}
	restored = true
	healed := time.Now()
	_, resolved := waitNotification(t, receiver, healed, alert, "resolved")
	logf("monitoring: %s resolved %s after the repair", alert, resolved.Sub(healed).Round(time.Second))
}

// waitFor polls cond every 2 s until it holds, and returns when, or fails t.
func waitFor(t *testing.T, timeout time.Duration, what string, cond func(context.Context) bool) time.Time {
	t.Helper()
	var at time.Time
	err := wait.PollUntilContextTimeout(t.Context(), 2*time.Second, timeout, true, func(ctx context.Context) (bool, error) {
		at = time.Now()
		return cond(ctx), nil
	})
	if err != nil {
		t.Fatalf("%s: not within %s", what, timeout)
	}
	return at
}

// waitNotification waits until the receiver got alert in status since
// since.
func waitNotification(t *testing.T, r *stack.AlertReceiver, since time.Time, alert, status string) (stack.Notification, time.Time) {
	t.Helper()
	var found stack.Notification
	at := waitFor(t, 3*time.Minute, "Alertmanager sends "+alert+" "+status, func(context.Context) bool {
		for _, n := range r.Received(since) {
			if n.Labels["alertname"] == alert && n.Status == status {
				found = n
				return true
			}
		}
		return false
	})
	return found, at
}

// queryVector runs an instant query and returns its vector.
func queryVector(ctx context.Context, prom promv1.API, q string) (model.Vector, error) {
	v, _, _, err := prom.Query(ctx, q, time.Now())
	if err != nil {
		return nil, err
	}
	vec, ok := v.(model.Vector)
	if !ok {
		return nil, errors.New("not a vector: " + v.Type().String())
	}
	return vec, nil
}

// ruleState returns a rule's name, health and last error.
func ruleState(r any) (string, promv1.RuleHealth, string) {
	switch r := r.(type) {
	case promv1.AlertingRule:
		return r.Name, r.Health, r.LastError
	case promv1.RecordingRule:
		return r.Name, r.Health, r.LastError
	}
	return "", "", ""
}

// shippedRuleNames returns the names of the alerts and records of the
// PrometheusRules the suite installs (test/e2e/overlay: deploy/default and
// the fleet component), sorted, each as often as it is defined.
func shippedRuleNames(t *testing.T) []string {
	t.Helper()
	root, err := framework.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	rendered, err := stack.Kubectl(t.Context(), "", "kustomize", filepath.Join(root, "test", "e2e", "overlay"))
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	dec := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader([]byte(rendered)), 4096)
	for {
		var u unstructured.Unstructured
		if err := dec.Decode(&u.Object); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			t.Fatal(err)
		}
		if u.GetKind() != "PrometheusRule" {
			continue
		}
		groups, _, _ := unstructured.NestedSlice(u.Object, "spec", "groups")
		for _, g := range groups {
			rules, _, _ := unstructured.NestedSlice(g.(map[string]any), "rules")
			for _, r := range rules {
				rule := r.(map[string]any)
				if name, ok := rule["alert"].(string); ok {
					names = append(names, name)
				} else if name, ok := rule["record"].(string); ok {
					names = append(names, name)
				}
			}
		}
	}
	slices.Sort(names)
	return names
}

// runningPods returns the running Pods of the Deployment app in
// kyma-system.
func runningPods(t *testing.T, app string) []corev1.Pod {
	t.Helper()
	list, err := sys.Clientset().CoreV1().Pods(stack.Namespace).List(t.Context(), metav1.ListOptions{LabelSelector: "app.kubernetes.io/name=" + app})
	if err != nil {
		t.Fatal(err)
	}
	return slices.DeleteFunc(list.Items, func(p corev1.Pod) bool {
		return p.Status.Phase != corev1.PodRunning || p.DeletionTimestamp != nil
	})
}

package e2e

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kyma-project/kim-snatch/pkg/check"
	"github.com/kyma-project/kim-snatch/test/e2e/stack"
	"github.com/kyma-project/kim-snatch/test/framework"
)

func TestKymaDeploymentRunsOnTheKymaPool(t *testing.T) {
	framework.InTier(t, framework.Smoke, "placement: each capability once, and this is the product's")
	framework.Shares(t)
	pool := pools(t)
	kyma := namespace(t, "e2e-kyma", true)
	pods := runDeployment(t, kyma, deployment("operator", 5, "100m"), 5)
	for _, p := range pods {
		if n := poolTerms(&p); n != 1 {
			t.Errorf("%s/%s has %d terms on %s, want 1", kyma, p.Name, n, framework.PoolLabel)
		}
		if got := pool[p.Spec.NodeName]; got != framework.KymaPool {
			t.Errorf("%s/%s runs on %s in pool %q, want pool %s", kyma, p.Name, p.Spec.NodeName, got, framework.KymaPool)
		}
	}
	logf("Kyma Deployment of 5: placement %v", placement(pods, pool))

	customer := namespace(t, "e2e-customer", false)
	pods = runDeployment(t, customer, deployment("shop", 5, "100m"), 5)
	for _, p := range pods {
		if n := poolTerms(&p); n != 0 {
			t.Errorf("customer Pod %s/%s has %d terms, want none", customer, p.Name, n)
		}
	}
	logf("customer Deployment of 5: placement %v", placement(pods, pool))
}

// With every Kyma node full, Kyma Pods go to the customer pool: the term
// is a preference, not a requirement.
func TestKymaPoolFullSpillsToTheCustomerPool(t *testing.T) {
	framework.InTier(t, framework.Full, "a second placement case; the smoke places Pods once")
	framework.Alone(t, "it fills the Kyma pool")
	c := newChecker(t)
	awaitAlert := watchPoolAlert(t, alertPodsOffPool)
	pool := pools(t)
	nodes, err := sys.Clientset().CoreV1().Nodes().List(t.Context(), metav1.ListOptions{LabelSelector: framework.PoolLabel + "=" + framework.KymaPool})
	if err != nil {
		t.Fatal(err)
	}
	// A node tainted for system Pods alone (the real node's) takes none
	// of these Pods.
	open := slices.DeleteFunc(nodes.Items, func(n corev1.Node) bool {
		return n.Spec.Unschedulable || slices.ContainsFunc(n.Spec.Taints, func(t corev1.Taint) bool { return t.Effect != corev1.TaintEffectPreferNoSchedule })
	})
	if len(open) == 0 {
		t.Fatal("no Kyma-pool node takes Pods")
	}
	// Each Pod takes 60% of a Kyma node's CPU, so one fits per Kyma node.
	alloc := open[0].Status.Allocatable[corev1.ResourceCPU]
	cpu := fmt.Sprintf("%dm", alloc.MilliValue()*6/10)
	kymaNodes := len(open)
	replicas := int32(kymaNodes + 2)

	ns := namespace(t, "e2e-full", true)
	pods := runDeployment(t, ns, deployment("big-operator", replicas, cpu), int(replicas))
	for _, p := range pods {
		if n := poolTerms(&p); n != 1 {
			t.Errorf("%s/%s has %d terms, want 1", ns, p.Name, n)
		}
	}
	got := placement(pods, pool)
	if got[framework.KymaPool] != kymaNodes || got[framework.CustomerPool] != 2 {
		t.Errorf("placement %v, want %d on %s (one per node) and 2 on %s", got, kymaNodes, framework.KymaPool, framework.CustomerPool)
	}
	logf("Kyma pool full (%d Pods of %s CPU, %d Kyma nodes): placement %v", replicas, cpu, kymaNodes, got)

	// The outcome, as ops see it: check counts the two that spilled, and
	// names the full pool as the cause; the off-pool alert fires, and no
	// other.
	res := placementItem(t, c)
	if res.Status != check.StatusWarn || !strings.Contains(res.Message, "0 lack the term, 2 carry it but run off pool "+framework.KymaPool) {
		t.Errorf("placement = %s %q, want WARN with 0 lacking and 2 off pool", res.Status, res.Message)
	}
	for _, p := range pods {
		if pool[p.Spec.NodeName] == framework.CustomerPool && !detailed(res, ns+"/"+p.Name, "pool full") {
			t.Errorf("placement details %q, want %s/%s off pool because the pool is full", res.Details, ns, p.Name)
		}
	}
	awaitAlert("Kyma pool full")
}

// Without any Kyma-pool node the term matches nothing and costs nothing.
func TestNoKymaPoolStillSchedules(t *testing.T) {
	framework.InTier(t, framework.Full, "a second placement case; the smoke places Pods once")
	framework.Alone(t, "it takes the Kyma pool's label off its Nodes")
	ctx := context.Background()
	cs := sys.Clientset()
	nodes, err := cs.CoreV1().Nodes().List(ctx, metav1.ListOptions{LabelSelector: framework.PoolLabel + "=" + framework.KymaPool})
	if err != nil {
		t.Fatal(err)
	}
	// Move the Kyma nodes into another pool for the duration of the test.
	relabel := func(from, to string) {
		for _, n := range nodes.Items {
			patch := fmt.Sprintf(`{"metadata":{"labels":{%q:%q}}}`, framework.PoolLabel, to)
			if _, err := cs.CoreV1().Nodes().Patch(ctx, n.Name, "application/merge-patch+json", []byte(patch), metav1.PatchOptions{}); err != nil {
				t.Fatalf("relabel node %s from %s to %s: %v", n.Name, from, to, err)
			}
		}
	}
	c := newChecker(t)
	awaitAlert := watchPoolAlert(t, alertPoolHasNoNodes)
	relabel(framework.KymaPool, "retired-pool")
	t.Cleanup(func() { relabel("retired-pool", framework.KymaPool) })

	pool := pools(t)
	ns := namespace(t, "e2e-nokyma", true)
	pods := runDeployment(t, ns, deployment("operator", 3, "100m"), 3)
	for _, p := range pods {
		if n := poolTerms(&p); n != 1 {
			t.Errorf("%s/%s has %d terms, want 1", ns, p.Name, n)
		}
		if pool[p.Spec.NodeName] == framework.KymaPool {
			t.Errorf("%s/%s on a node still labelled %s", ns, p.Name, framework.KymaPool)
		}
	}
	logf("no Kyma pool: placement %v", placement(pods, pool))

	// The pool is missing: every Kyma Pod runs off it for that reason,
	// the webhook Pods and syncer Pods included, and the alert that fires
	// is the one for the missing pool, not the one for Pods off the pool.
	res := placementItem(t, c)
	if res.Status != check.StatusWarn || !strings.Contains(res.Message, "0 lack the term") {
		t.Errorf("placement = %s %q, want WARN with 0 lacking the term", res.Status, res.Message)
	}
	for _, p := range pods {
		if !detailed(res, ns+"/"+p.Name, "pool missing") {
			t.Errorf("placement details %q, want %s/%s off pool because the pool is missing", res.Details, ns, p.Name)
		}
	}
	awaitAlert("no Kyma pool")
}

// placementItem runs check -o json and returns its placement item.
func placementItem(t *testing.T, c checker) check.Result {
	t.Helper()
	run, r := c.report(t, nil, "--kubeconfig", sys.KubeconfigPath(), "-o", "json")
	res := result(r, check.IDPlacement)
	logf("check, placement: %s %s\n  %s", res.Status, res.Message, strings.Join(res.Details, "\n  "))
	if run.stderr != "" {
		t.Errorf("stderr = %q", run.stderr)
	}
	return res
}

// detailed reports whether a detail line of res names the Pod ns/name and
// says what.
func detailed(res check.Result, pod, what string) bool {
	for _, d := range res.Details {
		if strings.Contains(d, pod+" ") && strings.Contains(d, what) {
			return true
		}
	}
	return false
}

// watchPoolAlert waits until alert, which both monitoring profiles fire, is
// quiet, and returns what, after the break that starts now, awaits it and
// prints the table. Without a Prometheus stack it does nothing.
func watchPoolAlert(t *testing.T, alert string) (awaitAlert func(scenario string)) {
	t.Helper()
	watch := newAlertWatch(t)
	if watch == nil {
		return func(string) {}
	}
	alerts := map[string][]string{stack.ProfileAPIServer: {alert}, stack.ProfileShoot: {alert}}
	watch.quiet(t, alerts)
	broken := time.Now()
	return func(scenario string) {
		watch.await(t, scenario, broken, alerts, nil, panelChange{})
		watch.table()
	}
}

package framework

import (
	"context"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
)

func TestControlPlaneServesLabelledNamespaceAndPod(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a control plane")
	}
	c := New(t, Options{})
	ctx := t.Context()

	info, err := c.Clientset.Discovery().ServerVersion()
	if err != nil {
		t.Fatalf("server version: %v", err)
	}
	if !strings.HasPrefix(info.GitVersion, "v1.36.") {
		t.Fatalf("server reports %q, want v1.36.x", info.GitVersion)
	}

	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{
		Name:   "kyma-system",
		Labels: map[string]string{"operator.kyma-project.io/managed-by": "kyma"},
	}}
	if _, err := c.Clientset.CoreV1().Namespaces().Create(ctx, ns, metav1.CreateOptions{}); err != nil {
		t.Fatalf("create namespace: %v", err)
	}
	got, err := c.Clientset.CoreV1().Namespaces().Get(ctx, ns.Name, metav1.GetOptions{})
	if err != nil {
		t.Fatalf("get namespace: %v", err)
	}
	if got.Labels["operator.kyma-project.io/managed-by"] != "kyma" {
		t.Fatalf("namespace labels = %v, want managed-by=kyma", got.Labels)
	}
	if _, err := c.Clientset.CoreV1().Pods(ns.Name).Create(ctx, testPod("smoke", nil), metav1.CreateOptions{}); err != nil {
		t.Fatalf("create pod: %v", err)
	}
	if err := c.Healthy(); err != nil {
		t.Fatal(err)
	}
}

func TestSchedulerBindsRequiredPoolToThatPool(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a control plane")
	}
	c := New(t, Options{Scheduler: true})
	ctx := t.Context()
	for _, pool := range []string{KymaPool, CustomerPool} {
		if _, err := c.CreateNodes(ctx, pool, 2); err != nil {
			t.Fatal(err)
		}
	}
	required := &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{
		RequiredDuringSchedulingIgnoredDuringExecution: &corev1.NodeSelector{NodeSelectorTerms: []corev1.NodeSelectorTerm{{
			MatchExpressions: []corev1.NodeSelectorRequirement{{Key: PoolLabel, Operator: corev1.NodeSelectorOpIn, Values: []string{KymaPool}}},
		}}},
	}}
	// Five Pods: a scheduler that ignored the term would put all five on
	// the Kyma pool by chance once in 32 runs.
	const pods = 5
	for i := range pods {
		p := testPod("required-"+string(rune('a'+i)), required)
		if _, err := c.Clientset.CoreV1().Pods("default").Create(ctx, p, metav1.CreateOptions{}); err != nil {
			t.Fatalf("create pod: %v", err)
		}
	}

	nodePool := map[string]string{}
	nodes, err := c.Clientset.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range nodes.Items {
		nodePool[n.Name] = n.Labels[PoolLabel]
	}
	err = wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		list, err := c.Clientset.CoreV1().Pods("default").List(ctx, metav1.ListOptions{})
		if err != nil {
			return false, err
		}
		bound := 0
		for _, p := range list.Items {
			if p.Spec.NodeName != "" {
				bound++
			}
		}
		return bound == pods, nil
	})
	if err != nil {
		t.Fatalf("pods not bound: %v", err)
	}
	list, err := c.Clientset.CoreV1().Pods("default").List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range list.Items {
		if pool := nodePool[p.Spec.NodeName]; pool != KymaPool {
			t.Errorf("pod %s bound to node %s in pool %q, want pool %s", p.Name, p.Spec.NodeName, pool, KymaPool)
		}
	}
}

func TestCreateNodesAreReadyAndUntainted(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a control plane")
	}
	c := New(t, Options{})
	nodes, err := c.CreateNodes(t.Context(), CustomerPool, 2)
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range nodes {
		got, err := c.Clientset.CoreV1().Nodes().Get(t.Context(), n.Name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if got.Labels[PoolLabel] != CustomerPool {
			t.Errorf("node %s pool label = %q, want %q", n.Name, got.Labels[PoolLabel], CustomerPool)
		}
		if len(got.Spec.Taints) != 0 {
			t.Errorf("node %s has taints %v, want none", n.Name, got.Spec.Taints)
		}
		ready := false
		for _, cond := range got.Status.Conditions {
			ready = ready || (cond.Type == corev1.NodeReady && cond.Status == corev1.ConditionTrue)
		}
		if !ready {
			t.Errorf("node %s is not Ready: %v", n.Name, got.Status.Conditions)
		}
		if got.Status.Allocatable.Cpu().IsZero() {
			t.Errorf("node %s has no allocatable CPU", n.Name)
		}
	}
}

func testPod(name string, affinity *corev1.Affinity) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: corev1.PodSpec{
			Affinity:   affinity,
			Containers: []corev1.Container{{Name: "app", Image: "registry.k8s.io/pause:3.10"}},
		},
	}
}

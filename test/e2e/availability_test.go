package e2e

import (
	"context"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kyma-project/kim-snatch/test/e2e/stack"
	"github.com/kyma-project/kim-snatch/test/framework"
)

// With every webhook replica down, Pod creation goes on: the API server
// fails open after at most the 2 s timeout, and counts it.
func TestAllWebhooksDownBlocksNothing(t *testing.T) {
	framework.InTier(t, framework.Full, "fail-open is also proven by the smoke's break of all replicas")
	framework.Alone(t, "it stops every webhook replica")
	ctx := context.Background()
	ns := namespace(t, "e2e-down", true)
	if err := sys.StopWebhooks(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := sys.StartWebhooks(ctx); err != nil {
			t.Errorf("start the webhooks again: %v", err)
		}
	})
	before := failOpen(t)
	const n = 10
	var slowest time.Duration
	for i := range n {
		start := time.Now()
		p, err := sys.Clientset().CoreV1().Pods(ns).Create(ctx, gatedPod("down"), metav1.CreateOptions{})
		d := time.Since(start)
		if err != nil {
			t.Fatalf("create Pod %d with the webhooks down: %v", i, err)
		}
		slowest = max(slowest, d)
		if poolTerms(p) != 0 {
			t.Errorf("%s has the term although no webhook runs", p.Name)
		}
	}
	rise := failOpen(t) - before
	logf("webhooks down: %d Pods created, slowest create %s, fail-open count +%v", n, slowest.Round(time.Millisecond), rise)
	if rise != n {
		t.Errorf("fail-open count rose by %v, want %d: one per Pod", rise, n)
	}

	if err := sys.StartWebhooks(ctx); err != nil {
		t.Fatal(err)
	}
	p, err := sys.Clientset().CoreV1().Pods(ns).Create(ctx, gatedPod("up"), metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if poolTerms(p) != 1 {
		t.Errorf("after the webhooks are back, %s has %d terms, want 1", p.Name, poolTerms(p))
	}
}

// A rolling restart of the replicas under load loses no request: each
// leaves the endpoints, drains what is in flight, and comes back.
func TestGracefulRestartUnderLoadLosesNothing(t *testing.T) {
	framework.InTier(t, framework.Full, "a rollout under load; the smoke proves the install, a rotation and a fault")
	framework.Alone(t, "it restarts the webhook's Pods under load")
	ns := namespace(t, "e2e-restart", true)
	before := failOpen(t)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan loadResult)
	go func() { done <- createLoad(ctx, ns, 20) }()
	time.Sleep(2 * time.Second)
	for i := range sys.WebhookReplicas() {
		if err := sys.RestartWebhook(context.Background(), i); err != nil {
			t.Error(err)
		}
		time.Sleep(2 * time.Second)
	}
	cancel()
	res := <-done
	for _, err := range res.errors {
		t.Errorf("create Pod: %v", err)
	}
	missing, total := withoutTerm(t, ns)
	rise := failOpen(t) - before
	logf("rolling restart of %d replicas under 20 Pods/s: %d Pods, %d without the term, fail-open count +%v",
		sys.WebhookReplicas(), total, len(missing), rise)
	if total == 0 {
		t.Fatal("no Pods were created")
	}
	if len(missing) != 0 || rise != 0 {
		t.Errorf("%d of %d Pods missed the term and the fail-open count rose by %v during the restart, want 0 and 0: %v", len(missing), total, rise, missing)
	}
}

// gatedPod is a Pod that the scheduler leaves alone (it carries a
// scheduling gate), so that it costs the control plane only its admission.
func gatedPod(prefix string) *corev1.Pod {
	zero := int64(0)
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{GenerateName: prefix + "-"},
		Spec: corev1.PodSpec{
			TerminationGracePeriodSeconds: &zero,
			SchedulingGates:               []corev1.PodSchedulingGate{{Name: "kim-snatch.kyma-project.io/e2e-hold"}},
			Containers:                    []corev1.Container{{Name: "app", Image: stack.PauseImage}},
		},
	}
}

package e2e

import (
	"context"
	"fmt"
	"os"
	"sync"
	"testing"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kyma-project/kim-snatch/pkg/certtest"
	"github.com/kyma-project/kim-snatch/pkg/syncer/syncertest"
	"github.com/kyma-project/kim-snatch/test/e2e/stack"
	"github.com/kyma-project/kim-snatch/test/framework"
	"github.com/kyma-project/kim-snatch/test/framework/poll"
)

// logf prints progress and figures; they end up in the closing notes.
func logf(format string, args ...any) {
	fmt.Fprintf(os.Stderr, time.Now().Format("15:04:05.000")+" "+format+"\n", args...)
}

// namespace creates a namespace of the test's own, Kyma-managed or not,
// and deletes it when the test ends (framework.Namespace).
func namespace(t *testing.T, prefix string, managed bool) string {
	t.Helper()
	var labels map[string]string
	if managed {
		labels = map[string]string{stack.ManagedByLabel: "kyma"}
	}
	return framework.Namespace(t, sys.Clientset(), prefix, labels)
}

// deployment is a Deployment of pause Pods requesting cpu each.
func deployment(name string, replicas int32, cpu string) *appsv1.Deployment {
	return stack.PauseDeployment(name, replicas, cpu)
}

// runDeployment creates d in ns and waits until n of its Pods are bound to
// Nodes, then returns all its Pods.
func runDeployment(t *testing.T, ns string, d *appsv1.Deployment, bound int) []corev1.Pod {
	t.Helper()
	ctx := t.Context()
	cs := sys.Clientset()
	if _, err := cs.AppsV1().Deployments(ns).Create(ctx, d, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	var pods []corev1.Pod
	what := fmt.Sprintf("%d of the %d Pods of Deployment %s/%s bound", bound, *d.Spec.Replicas, ns, d.Name)
	poll.Eventually(t, what, func(ctx context.Context) error {
		got, n, err := stack.PausePods(ctx, cs, ns, d.Name)
		if err != nil {
			return err
		}
		pods = got
		if n < bound || len(pods) != int(*d.Spec.Replicas) {
			return fmt.Errorf("%d bound of %s", n, describe(pods))
		}
		return nil
	}, poll.Timeout(2*time.Minute))
	return pods
}

// poolTerms counts the preferred node affinity terms on the pool label.
func poolTerms(p *corev1.Pod) int {
	a := p.Spec.Affinity
	if a == nil || a.NodeAffinity == nil {
		return 0
	}
	n := 0
	for _, term := range a.NodeAffinity.PreferredDuringSchedulingIgnoredDuringExecution {
		for _, e := range term.Preference.MatchExpressions {
			if e.Key == framework.PoolLabel {
				n++
			}
		}
	}
	return n
}

// pools maps Node names to their pool.
func pools(t *testing.T) map[string]string {
	t.Helper()
	nodes, err := sys.Clientset().CoreV1().Nodes().List(t.Context(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, n := range nodes.Items {
		out[n.Name] = n.Labels[framework.PoolLabel]
	}
	return out
}

// placement counts Pods per pool ("" for unbound).
func placement(pods []corev1.Pod, pool map[string]string) map[string]int {
	out := map[string]int{}
	for _, p := range pods {
		if p.Spec.NodeName == "" {
			out[""]++
			continue
		}
		out[pool[p.Spec.NodeName]]++
	}
	return out
}

// bundleFingerprints lists the fingerprints of each webhook entry's
// caBundle in mwc.
func bundleFingerprints(mwc *admissionregistrationv1.MutatingWebhookConfiguration) [][]string {
	var per [][]string
	for _, b := range syncertest.Bundles(mwc) {
		per = append(per, certtest.Fingerprints(b))
	}
	return per
}

func describe(pods []corev1.Pod) string {
	s := fmt.Sprintf("%d Pods:", len(pods))
	for _, p := range pods {
		s += fmt.Sprintf(" %s(node=%q terms=%d)", p.Name, p.Spec.NodeName, poolTerms(&p))
	}
	return s
}

// loadResult is what a burst of Pod creations produced.
type loadResult struct {
	created []string
	errors  []error
	latency []time.Duration
}

// percentile is the p-th percentile (0 < p <= 1) of the create latencies.
func (r loadResult) percentile(p float64) time.Duration {
	return syncertest.Percentile(r.latency, 100*p)
}

// createLoad creates rate Pods per second in ns until ctx ends. The Pods
// carry a scheduling gate: the scheduler leaves them alone, so a long
// burst costs the control plane only the admission under test.
func createLoad(ctx context.Context, ns string, rate int) loadResult {
	var mu sync.Mutex
	var res loadResult
	var wg sync.WaitGroup
	tick := time.NewTicker(time.Second / time.Duration(rate))
	defer tick.Stop()
	for i := 0; ; i++ {
		select {
		case <-ctx.Done():
			wg.Wait()
			return res
		case <-tick.C:
		}
		pod := gatedPod("load")
		pod.Labels = map[string]string{"app": "load"}
		wg.Add(1)
		go func() {
			defer wg.Done()
			cctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			start := time.Now()
			p, err := sys.Clientset().CoreV1().Pods(ns).Create(cctx, pod, metav1.CreateOptions{})
			d := time.Since(start)
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				res.errors = append(res.errors, err)
				return
			}
			res.created = append(res.created, p.Name)
			res.latency = append(res.latency, d)
		}()
	}
}

// withoutTerm lists the Pods of ns labelled app=load that lack the term.
func withoutTerm(t *testing.T, ns string) (missing []string, total int) {
	t.Helper()
	list, err := sys.Clientset().CoreV1().Pods(ns).List(context.Background(), metav1.ListOptions{LabelSelector: "app=load"})
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range list.Items {
		if poolTerms(&p) != 1 {
			missing = append(missing, p.Name)
		}
	}
	return missing, len(list.Items)
}

func failOpen(t *testing.T) float64 {
	t.Helper()
	v, err := stack.FailOpenCount(context.Background(), sys.Clientset(), stack.WebhookEntryName)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

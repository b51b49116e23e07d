package e2e

import (
	"context"
	"crypto/tls"
	"net"
	"net/http"
	"strconv"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/kyma-project/kim-snatch/test/e2e/stack"
	"github.com/kyma-project/kim-snatch/test/framework"
	"github.com/kyma-project/kim-snatch/test/framework/hostile"
	"github.com/kyma-project/kim-snatch/test/process"
)

// hostileSpan is how long the hostile clients and the load run together.
const hostileSpan = 60 * time.Second

// Hostile clients from the test process attack every webhook replica at its
// Pod's address, as any Pod could, while 20 Pods/s are created in a Kyma
// namespace: bodies of 32 MiB claimed and never sent, the largest review sent
// slowly, idle handshakes, all on many connections at once. With the shipped
// limits no replica restarts or is OOM-killed, and every Pod has the term or
// is counted as a fail-open by the API server.
func TestHostileClientsNeitherKillTheWebhookNorLosePods(t *testing.T) {
	framework.InTier(t, framework.Full, "a minute of hostile load; pkg/admission and make bench prove the bounds without a node")
	framework.Alone(t, "it loads the webhook with hostile clients up to its bounds")
	ns := namespace(t, "e2e-hostile", true)
	pods := runningPods(t, stack.WebhookName)
	if len(pods) == 0 {
		t.Fatal("no running webhook Pod")
	}
	restartsBefore := webhookRestarts(pods)
	before := failOpen(t)

	ctx, cancel := context.WithCancel(context.Background())
	var attackers sync.WaitGroup
	for _, p := range pods {
		h := hostile.Clients{Addr: hostPort(p.Status.PodIP, webhookPort),
			TLS: &tls.Config{InsecureSkipVerify: true, MinVersion: tls.VersionTLS12}} //nolint:gosec // an attacker trusts anything
		h.Start(ctx, &attackers)
	}
	peak := sampleWebhookRSS(ctx, pods)
	done := make(chan loadResult)
	go func() { done <- createLoad(ctx, ns, 20) }()
	time.Sleep(hostileSpan)
	cancel()
	res := <-done
	attackers.Wait()
	rss := peak()

	for _, err := range res.errors {
		t.Errorf("create Pod: %v", err)
	}
	missing, total := withoutTerm(t, ns)
	rise := failOpen(t) - before
	after := runningPods(t, stack.WebhookName)
	restarts, oom := webhookRestarts(after)-restartsBefore, oomKilled(after)
	logf("hostile clients (%d claiming 32 MiB, %d sending the largest review slowly, %d idle, per replica) for %s under 20 Pods/s: %d Pods, %d without the term, fail-open count +%v, webhook RSS peak %.1f MiB, restarts %d, OOM-killed %v, create p50 %s p99 %s",
		hostile.ClaimConns, hostile.SlowConns, hostile.IdleConns, hostileSpan, total, len(missing), rise, float64(rss)/(1<<20), restarts, oom,
		res.percentile(0.5), res.percentile(0.99))
	if total == 0 {
		t.Fatal("no Pods were created")
	}
	if restarts != 0 || len(oom) != 0 || len(after) != len(pods) {
		t.Errorf("webhook containers restarted %d times, OOM-killed: %v, running replicas %d of %d; want none restarted", restarts, oom, len(after), len(pods))
	}
	if float64(len(missing)) > rise {
		t.Errorf("%d of %d Pods lack the term but the fail-open count rose by only %v: some were lost without the API server counting them", len(missing), total, rise)
	}
}

// webhookRestarts is the sum of the restart counts of the Pods' containers.
func webhookRestarts(pods []corev1.Pod) int32 {
	var n int32
	for _, p := range pods {
		n += restartCount(p)
	}
	return n
}

// oomKilled names the Pods whose container was last terminated for memory.
func oomKilled(pods []corev1.Pod) []string {
	var names []string
	for _, p := range pods {
		for _, c := range p.Status.ContainerStatuses {
			if term := c.LastTerminationState.Terminated; term != nil && term.Reason == "OOMKilled" {
				names = append(names, p.Name)
			}
		}
	}
	return names
}

// sampleWebhookRSS scrapes process_resident_memory_bytes of each replica until
// ctx ends; the function it returns waits for the last sample and returns the
// largest.
func sampleWebhookRSS(ctx context.Context, pods []corev1.Pod) func() int64 {
	var mu sync.Mutex
	var peak int64
	var wg sync.WaitGroup
	client := &http.Client{Timeout: 2 * time.Second}
	for _, p := range pods {
		url := "http://" + net.JoinHostPort(p.Status.PodIP, strconv.Itoa(metricsPort)) + "/metrics"
		wg.Go(func() {
			wait.UntilWithContext(ctx, func(context.Context) {
				if v, err := process.Metric(client, url, "process_resident_memory_bytes", ""); err == nil {
					mu.Lock()
					peak = max(peak, int64(v))
					mu.Unlock()
				}
			}, 250*time.Millisecond)
		})
	}
	return func() int64 {
		wg.Wait()
		mu.Lock()
		defer mu.Unlock()
		return peak
	}
}

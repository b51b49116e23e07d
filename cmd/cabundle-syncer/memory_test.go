package main

import (
	"context"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/kyma-project/kim-snatch/pkg/certtest"
	"github.com/kyma-project/kim-snatch/pkg/syncer"
	"github.com/kyma-project/kim-snatch/pkg/syncer/syncertest"
	"github.com/kyma-project/kim-snatch/test/framework"
)

func TestMemoryDoesNotGrowWithTheClustersSecrets(t *testing.T) {
	c, ctx := newCluster(t), context.Background()
	cs := c.Clientset
	caA := certtest.MustCA(t, certtest.Options{CommonName: "ca-a"})
	setupObjects(t, cs, caA)
	applyRBAC(t, c)
	saCfg, kubeconfig := serviceAccountConfig(t, c)

	p := startSyncer(t, "syncer", append([]string{"--kubeconfig=" + kubeconfig}, leaseFlags...)...)
	p.waitMetric("cabundle_syncer_is_leader", 1, 30*time.Second)
	waitBundle(t, cs, caA.Fingerprint())
	// Measure with no other Secrets once the first sync has done all it
	// does, the last of which is its Event.
	if _, err := syncertest.WaitForEvent(ctx, cs, namespace, secretName, corev1.EventTypeNormal, syncer.EventCABundleUpdated, 30*time.Second); err != nil {
		t.Fatal(err)
	}
	rssBefore := p.rssBytes()

	// 2,000 unrelated Secrets of 32 KiB each, in the syncer's own
	// namespace, where a namespace-scoped cache would pick them up: 62.5 MiB
	// of data that a cache of Secrets would hold at least once.
	const n, size = 2000, 32 << 10
	start := time.Now()
	if err := framework.CreateSecrets(ctx, cs, namespace, n, size); err != nil {
		t.Fatal(err)
	}
	t.Logf("created %d Secrets of %d KiB in %s", n, size>>10, time.Since(start).Round(time.Millisecond))

	// The syncer is alive and sees its Secret change among them.
	caB := certtest.MustCA(t, certtest.Options{CommonName: "ca-b"})
	putCA(t, cs, caB)
	// CA B was written after the 2,000 Secrets were created, and a watch of
	// Secrets delivers changes in order: once the bundle holds CA B, a cache
	// of Secrets has received, and holds, all of them.
	waitBundle(t, cs, caB.Fingerprint(), caA.Fingerprint())
	rssAfter := p.rssBytes()

	growth := rssAfter - rssBefore
	t.Logf("syncer RSS: %.1f MiB with no other Secrets, %.1f MiB with %d × %d KiB Secrets (%+.1f%%; target within ±10%%)",
		mib(rssBefore), mib(rssAfter), n, size>>10, 100*float64(growth)/float64(rssBefore))
	// Caching the Secrets would add at least their 62.5 MiB of data; half of
	// that is far above the noise of the Go heap and far below the cost of
	// caching them.
	if limit := int64(n * size / 2); growth > limit {
		t.Errorf("RSS grew by %.1f MiB, more than %.1f MiB: the Secrets are being cached", mib(growth), mib(limit))
	}

	// The structural reason: the cache the binary builds (CacheOptions),
	// under the same ServiceAccount, holds one Secret among 2,001; and the
	// ServiceAccount could not list the others even if it tried.
	cfg := syncer.Config{SecretNamespace: namespace, SecretName: secretName, CAKey: "ca.crt", WebhookConfiguration: mwcName}
	if got := cachedSecrets(t, saCfg, cfg); got != 1 {
		t.Errorf("the syncer's cache holds %d Secrets, want 1", got)
	}
	sa := kubernetes.NewForConfigOrDie(saCfg)
	if _, err := sa.CoreV1().Secrets(namespace).List(ctx, metav1.ListOptions{Limit: 1}); !apierrors.IsForbidden(err) {
		t.Errorf("the ServiceAccount lists Secrets without a field selector: %v, want Forbidden", err)
	}
}

func mib(b int64) float64 { return float64(b) / (1 << 20) }

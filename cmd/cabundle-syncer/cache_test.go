package main

import (
	"context"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/cache"

	"github.com/kyma-project/kim-snatch/pkg/syncer"
)

// cachedSecrets builds the cache the binary builds, syncs it, and counts the
// Secrets in it.
func cachedSecrets(t *testing.T, cfg *rest.Config, sc syncer.Config) int {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c, err := cache.New(cfg, syncer.CacheOptions(sc))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.GetInformer(ctx, &corev1.Secret{}); err != nil {
		t.Fatal(err)
	}
	go func() { _ = c.Start(ctx) }()
	if !c.WaitForCacheSync(ctx) {
		t.Fatal("cache did not sync within 30s")
	}
	var list corev1.SecretList
	if err := c.List(ctx, &list); err != nil {
		t.Fatal(err)
	}
	return len(list.Items)
}

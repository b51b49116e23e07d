package main

import (
	"context"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/rest"

	"github.com/kyma-project/kim-snatch/pkg/syncer"
	"github.com/kyma-project/kim-snatch/pkg/syncer/syncertest"
)

// cachedSecrets builds the cache the binary builds, syncs it, and counts the
// Secrets in it.
func cachedSecrets(t *testing.T, cfg *rest.Config, sc syncer.Config) int {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c := syncertest.SyncedCache(ctx, t, cfg, syncer.CacheOptions(sc), &corev1.Secret{})
	var list corev1.SecretList
	if err := c.List(ctx, &list); err != nil {
		t.Fatal(err)
	}
	return len(list.Items)
}

package syncertest

import (
	"context"
	"testing"

	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// SyncedCache starts a cache with opts, as the syncer's manager builds it,
// with an informer for each of objs, and waits until it has synced. The
// cache runs until ctx is done.
func SyncedCache(ctx context.Context, t testing.TB, cfg *rest.Config, opts cache.Options,
	objs ...client.Object) cache.Cache {
	t.Helper()
	c, err := cache.New(cfg, opts)
	if err != nil {
		t.Fatal(err)
	}
	for _, obj := range objs {
		if _, err := c.GetInformer(ctx, obj); err != nil {
			t.Fatal(err)
		}
	}
	go func() { _ = c.Start(ctx) }()
	if !c.WaitForCacheSync(ctx) {
		t.Fatal("the cache did not sync")
	}
	return c
}

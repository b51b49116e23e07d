package syncer

import (
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

func TestRetryBackoffIsCapped(t *testing.T) {
	const minRetryDelay, maxRetryDelay = 100 * time.Millisecond, 30 * time.Second
	rl := retryBackoff()
	key := reconcile.Request{NamespacedName: types.NamespacedName{Name: "kim-snatch-mutating-webhook-configuration"}}
	var delays []time.Duration
	for range 40 { // far past the point where an uncapped backoff exceeds an hour
		delays = append(delays, rl.When(key))
	}
	if delays[0] != minRetryDelay {
		t.Errorf("first retry after %s, want %s", delays[0], minRetryDelay)
	}
	for i := 1; i < len(delays); i++ {
		if delays[i] < delays[i-1] {
			t.Fatalf("retry %d after %s, earlier than retry %d after %s", i, delays[i], i-1, delays[i-1])
		}
	}
	if last := delays[len(delays)-1]; last != maxRetryDelay {
		t.Errorf("after %d failures the retry comes after %s, want the cap %s", len(delays), last, maxRetryDelay)
	}
	rl.Forget(key)
	if got := rl.When(key); got != minRetryDelay {
		t.Errorf("after a success the next retry comes after %s, want %s again", got, minRetryDelay)
	}
}

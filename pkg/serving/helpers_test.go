package serving

import (
	"context"
	"testing"
)

// runUntilCleanup runs run in the background until the test ends, and
// fails the test if run then returns an error; what names it.
func runUntilCleanup(t testing.TB, what string, run func(context.Context) error) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- run(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("%s: %v", what, err)
		}
	})
}

// Package fataltb is a testing.TB that records a Fatal instead of failing
// the test that runs it, for the tests of the kit's helpers that fail
// their caller's test (poll.Eventually, process.Run).
package fataltb

import (
	"context"
	"fmt"
	"runtime"
	"testing"
)

// Recorder is a testing.TB whose Fatal records its message and ends the
// goroutine, as testing.T's does. It embeds a nil TB: a helper that calls
// any other method of it panics, which fails the test that runs it.
type Recorder struct {
	testing.TB
	ctx context.Context
	// Failure is the message of the last Fatal, or "".
	Failure string
}

// New returns a Recorder whose Context is ctx.
func New(ctx context.Context) *Recorder {
	return &Recorder{ctx: ctx}
}

// Helper does nothing: the Recorder reports no lines.
func (r *Recorder) Helper() {}

// Context is the context New was given.
func (r *Recorder) Context() context.Context { return r.ctx }

// Fatal records args and ends the goroutine.
func (r *Recorder) Fatal(args ...any) {
	r.Failure = fmt.Sprint(args...)
	runtime.Goexit()
}

// Run calls f with r on a goroutine of its own, since Fatal ends it, and
// returns when f has returned or failed.
func (r *Recorder) Run(f func(testing.TB)) {
	done := make(chan struct{})
	go func() {
		defer close(done)
		f(r)
	}()
	<-done
}

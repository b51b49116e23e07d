// Package poll is the tests' one wait for a condition: Eventually fails a
// test, Until returns an error, and both say, when they give up, what they
// waited for and the last state the condition saw, not only that time ran
// out. A condition returns nil once it holds and otherwise an error that
// describes what it saw; Stop ends the wait at once. It imports the
// standard library alone, so that tests anywhere in the repository, and
// test/framework itself, can use it (docs/development.md, the test kit).
package poll

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"
)

// A Condition returns nil once what the caller waits for holds, and
// otherwise an error describing the state it observed, which a wait that
// gives up reports. It runs on the caller's goroutine, with a context that
// ends when the wait does.
type Condition func(ctx context.Context) error

const (
	// DefaultTimeout bounds a wait that sets no Timeout.
	DefaultTimeout = 30 * time.Second
	// firstInterval is the pause after the first attempt; each pause
	// doubles it, up to maxInterval: a condition that holds a moment later
	// is seen soon, one that takes long is not asked too often.
	firstInterval = 10 * time.Millisecond
	maxInterval   = 250 * time.Millisecond
)

// An Option changes how a wait polls.
type Option func(*config)

type config struct {
	timeout  time.Duration
	interval time.Duration // fixed; 0 for the doubling policy
}

// Timeout bounds the wait to d instead of DefaultTimeout. With d <= 0 the
// wait has no bound of its own: its context alone ends it.
func Timeout(d time.Duration) Option {
	return func(c *config) { c.timeout = d }
}

// Interval pauses d between attempts instead of the default policy, for a
// condition that must not be asked more often, or that times what it sees.
func Interval(d time.Duration) Option {
	return func(c *config) { c.interval = d }
}

// Stop marks err as final: a condition that returns Stop(err) ends the
// wait at once, which then returns err. Stop(nil) is nil.
func Stop(err error) error {
	if err == nil {
		return nil
	}
	return &stopped{err: err}
}

type stopped struct{ err error }

func (s *stopped) Error() string { return s.err.Error() }
func (s *stopped) Unwrap() error { return s.err }

// Eventually calls cond until it returns nil, and fails t with what and
// cond's last error when the timeout passes, t's context ends or cond
// returns Stop. In a Cleanup, where t's context has ended, use Until.
func Eventually(t testing.TB, what string, cond Condition, opts ...Option) {
	t.Helper()
	if err := Until(t.Context(), what, cond, opts...); err != nil {
		t.Fatal(err)
	}
}

// Until calls cond, at once and then after each pause, until it returns
// nil, and then returns nil. It returns an error naming what, the reason it
// gave up and cond's last error, which it wraps, when the timeout passes,
// ctx ends (context.DeadlineExceeded or context.Canceled is wrapped too),
// or cond returns Stop(err). cond runs at least once, even if ctx has
// ended.
func Until(ctx context.Context, what string, cond Condition, opts ...Option) error {
	c := config{timeout: DefaultTimeout}
	for _, o := range opts {
		o(&c)
	}
	wctx, cancel := ctx, context.CancelFunc(func() {})
	if c.timeout > 0 {
		wctx, cancel = context.WithTimeout(ctx, c.timeout)
	}
	defer cancel()
	start := time.Now()
	var last error
	pause := c.first()
	for attempt := 1; ; attempt++ {
		err := cond(wctx)
		if err == nil {
			return nil
		}
		if s, ok := errors.AsType[*stopped](err); ok {
			return fmt.Errorf("waiting for %s: stopped at attempt %d: %w", what, attempt, s.err)
		}
		last = observed(wctx, last, err)
		if err := sleep(wctx, pause); err != nil {
			return gaveUp(what, ctx, c, attempt, time.Since(start), last)
		}
		pause = c.next(pause)
	}
}

// observed returns the state to report after an attempt that returned
// err: err, unless the wait's context cut that attempt short and an
// earlier attempt saw something, which then stays the last state seen.
func observed(ctx context.Context, last, err error) error {
	cut := errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled)
	if cut && ctx.Err() != nil && last != nil {
		return last
	}
	return err
}

// gaveUp describes a wait that ended without cond holding: by its own
// timeout, or because the caller's context ended. The error wraps the
// context's error and last.
func gaveUp(what string, ctx context.Context, c config, attempts int, took time.Duration, last error) error {
	why, cause := fmt.Sprintf("timed out after %s", c.timeout), context.DeadlineExceeded
	if err := ctx.Err(); err != nil {
		why, cause = fmt.Sprintf("%v after %s", err, took.Round(time.Millisecond)), err
	}
	return &waitError{
		msg:  fmt.Sprintf("waiting for %s: %s and %d attempts; last: %v", what, why, attempts, last),
		errs: []error{cause, last},
	}
}

type waitError struct {
	msg  string
	errs []error
}

func (e *waitError) Error() string   { return e.msg }
func (e *waitError) Unwrap() []error { return e.errs }

// sleep pauses d, or returns ctx's error when ctx ends first.
func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// first returns the pause after the first attempt.
func (c config) first() time.Duration {
	if c.interval > 0 {
		return c.interval
	}
	return firstInterval
}

// next returns the pause that follows a pause of d.
func (c config) next(d time.Duration) time.Duration {
	if c.interval > 0 {
		return c.interval
	}
	return min(2*d, maxInterval)
}

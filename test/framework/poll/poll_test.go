package poll

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/kyma-project/kim-snatch/test/framework/fataltb"
)

// fast keeps the tests that must run out of time short; what they assert
// does not depend on it.
var fast = []Option{Timeout(50 * time.Millisecond), Interval(time.Millisecond)}

func TestUntilReturnsOnceTheConditionHoldsAndAsksNoMore(t *testing.T) {
	calls := 0
	err := Until(t.Context(), "the third call", func(context.Context) error {
		calls++
		if calls < 3 {
			return fmt.Errorf("call %d", calls)
		}
		return nil
	}, Interval(time.Millisecond))
	if err != nil || calls != 3 {
		t.Errorf("Until = %v after %d calls, want nil after 3", err, calls)
	}
}

func TestUntilReportsWhatItWaitedForAndTheLastStateOnTimeout(t *testing.T) {
	calls := 0
	var last error
	err := Until(t.Context(), "the answer", func(context.Context) error {
		calls++
		last = fmt.Errorf("the answer is still %d", calls)
		return last
	}, fast...)
	if err == nil {
		t.Fatal("Until = nil for a condition that never holds")
	}
	want := fmt.Sprintf("waiting for the answer: timed out after 50ms and %d attempts; last: the answer is still %d",
		calls, calls)
	if err.Error() != want {
		t.Errorf("Until = %q, want %q", err, want)
	}
	if !errors.Is(err, last) || !errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled) {
		t.Errorf("Until = %v; want it to wrap the last state and context.DeadlineExceeded alone", err)
	}
}

func TestUntilStopsWhenTheContextIsCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	calls := 0
	err := Until(ctx, "a cancel", func(context.Context) error {
		calls++
		if calls == 2 {
			cancel()
		}
		return fmt.Errorf("call %d", calls)
	}, Timeout(time.Hour), Interval(time.Millisecond))
	if !errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("Until = %v, want context.Canceled", err)
	}
	if calls != 2 || !strings.Contains(err.Error(), "last: call 2") {
		t.Errorf("Until = %v after %d calls; want no call after the cancel, and call 2 reported", err, calls)
	}
}

func TestStopEndsTheWaitAtOnceWithItsError(t *testing.T) {
	broken := errors.New("the process exited")
	calls := 0
	err := Until(t.Context(), "a process", func(context.Context) error {
		calls++
		return Stop(broken)
	}, Timeout(time.Hour))
	if calls != 1 || !errors.Is(err, broken) || !strings.HasPrefix(err.Error(), "waiting for a process: ") {
		t.Errorf("Until = %v after %d calls; want the stop's error after 1, naming what it waited for", err, calls)
	}
	if Stop(nil) != nil {
		t.Error("Stop(nil) != nil")
	}
}

// An attempt that the end of the wait cuts short saw nothing: the state
// before it stays the one reported.
func TestACallCutShortByTheEndOfTheWaitDoesNotHideTheLastState(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	calls := 0
	err := Until(ctx, "a slow answer", func(ctx context.Context) error {
		calls++
		if calls == 1 {
			return errors.New("no answer yet")
		}
		cancel()
		return fmt.Errorf("get: %w", ctx.Err())
	}, Timeout(time.Hour), Interval(time.Millisecond))
	if err == nil || !strings.HasSuffix(err.Error(), "last: no answer yet") || calls != 2 {
		t.Errorf("Until = %v after %d calls; want the first call's state after 2", err, calls)
	}
}

func TestTheConditionRunsOnceEvenWhenTheContextHasEnded(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	calls := 0
	if err := Until(ctx, "a held condition", func(context.Context) error { calls++; return nil }); err != nil {
		t.Errorf("Until = %v for a condition that holds, want nil", err)
	}
	err := Until(ctx, "a failing condition", func(context.Context) error { calls++; return errors.New("no") })
	if calls != 2 || !errors.Is(err, context.Canceled) || !strings.HasSuffix(err.Error(), "last: no") {
		t.Errorf("Until = %v after %d calls in all, want context.Canceled and the state after 2", err, calls)
	}
}

// The condition's context carries the wait's own deadline, so that its
// calls end with the wait; Timeout(0) leaves only the caller's.
func TestTheConditionsContextEndsWithTheWait(t *testing.T) {
	deadline := func(opts ...Option) bool {
		var has bool
		_ = Until(context.Background(), "a deadline", func(ctx context.Context) error {
			_, has = ctx.Deadline()
			return nil
		}, opts...)
		return has
	}
	if !deadline() || !deadline(Timeout(time.Minute)) {
		t.Error("the condition's context has no deadline under a timeout")
	}
	if deadline(Timeout(0)) {
		t.Error("the condition's context has a deadline under Timeout(0) and a context without one")
	}
}

func TestThePausesDoubleUpToTheCapAndAFixedIntervalStays(t *testing.T) {
	c := config{}
	d := c.first()
	for range 20 {
		n := c.next(d)
		if n < firstInterval || n > maxInterval || (n != 2*d && n != maxInterval) {
			t.Fatalf("the pause after %s is %s, want it doubled, up to %s", d, n, maxInterval)
		}
		d = n
	}
	if d != maxInterval {
		t.Errorf("the pause settles at %s, want %s", d, maxInterval)
	}
	fixed := config{interval: time.Second}
	if fixed.first() != time.Second || fixed.next(time.Second) != time.Second {
		t.Error("Interval(time.Second) does not pause a second each time")
	}
}

// eventually calls Eventually with r, which records its Fatal.
func eventually(r *fataltb.Recorder, what string, cond Condition, opts ...Option) {
	r.Run(func(tb testing.TB) { Eventually(tb, what, cond, opts...) })
}

func TestEventuallyFailsTheTestWithWhatUntilReports(t *testing.T) {
	r := fataltb.New(t.Context())
	eventually(r, "a held condition", func(context.Context) error { return nil })
	if r.Failure != "" {
		t.Errorf("Eventually failed a condition that holds: %s", r.Failure)
	}
	eventually(r, "the impossible", func(context.Context) error { return errors.New("still possible") }, fast...)
	want := "waiting for the impossible: timed out after 50ms and "
	if !strings.HasPrefix(r.Failure, want) || !strings.HasSuffix(r.Failure, "; last: still possible") {
		t.Errorf("Eventually failed with %q, want %q ... \"; last: still possible\"", r.Failure, want)
	}
}

func TestEventuallyEndsWithTheTestsContext(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	r := fataltb.New(ctx)
	eventually(r, "a cancel", func(context.Context) error { cancel(); return errors.New("waiting") }, Timeout(time.Hour))
	if !strings.Contains(r.Failure, "context canceled") || !strings.HasSuffix(r.Failure, "last: waiting") {
		t.Errorf("Eventually failed with %q, want the cancel and the last state", r.Failure)
	}
}

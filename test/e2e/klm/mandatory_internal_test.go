package klm

import (
	"testing"
	"time"
)

func TestRolloutDelay(t *testing.T) {
	for _, tc := range []struct {
		name     string
		maxDelay time.Duration
		draw     int64 // what the random source returns
		want     time.Duration
	}{
		{"no_bound_is_at_once", 0, 7, 0},
		{"negative_bound_is_at_once", -time.Second, 7, 0},
		{"draw_within_the_bound_is_the_delay", 5 * time.Minute, int64(90 * time.Second), 90 * time.Second},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var asked int64
			got := rolloutDelay(tc.maxDelay, func(n int64) int64 { asked = n; return tc.draw })
			if got != tc.want {
				t.Errorf("delay = %v, want %v", got, tc.want)
			}
			if tc.maxDelay > 0 && asked != int64(tc.maxDelay) {
				t.Errorf("drew from [0, %v), want [0, %v)", time.Duration(asked), tc.maxDelay)
			}
		})
	}
}

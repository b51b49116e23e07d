package main

import (
	"os"
	"runtime/debug"
	"testing"
)

func TestGCIsTunedUnlessGOGCIsSet(t *testing.T) {
	defer debug.SetGCPercent(debug.SetGCPercent(100))

	t.Run("unset_GOGC_gets_the_default", func(t *testing.T) {
		t.Setenv("GOGC", "") // restores GOGC after the test
		if err := os.Unsetenv("GOGC"); err != nil {
			t.Fatal(err)
		}
		debug.SetGCPercent(100)
		tuneGC()
		if got := debug.SetGCPercent(100); got != defaultGCPercent {
			t.Errorf("GC percent %d, want %d", got, defaultGCPercent)
		}
	})
	t.Run("GOGC_wins", func(t *testing.T) {
		t.Setenv("GOGC", "200")
		debug.SetGCPercent(200) // what the runtime read from GOGC at start
		tuneGC()
		if got := debug.SetGCPercent(100); got != 200 {
			t.Errorf("GC percent %d, want GOGC's 200 kept", got)
		}
	})
}

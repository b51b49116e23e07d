package main

import (
	"os"
	"runtime/debug"
)

// defaultGCPercent is the webhook's GOGC unless the environment sets one.
// Its live heap is a few MiB and each review allocates a few hundred bytes,
// so collecting at half the live heap instead of all of it costs little
// CPU, and it keeps the RSS of a replica under load about 1.5 MiB lower
// (docs/benchmarks.md): what a replica on every cluster costs.
const defaultGCPercent = 50

// tuneGC applies defaultGCPercent unless GOGC is set.
func tuneGC() {
	if _, set := os.LookupEnv("GOGC"); !set {
		debug.SetGCPercent(defaultGCPercent)
	}
}

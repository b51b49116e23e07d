// Package command is what the commands under test/bench/cmd share: how they
// parse their flags, stop on a signal and report an error, and the usage
// file peak-rss writes for the harness. It is not pkg/cmdline.Main, whose
// logging packages would add to the resident set of unpaged-pods, a
// baseline that must hold its reads and nothing else.
package command

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"syscall"
)

// Main parses the command line into fs and calls run with a context that
// ends on SIGINT or SIGTERM. An error of either is printed after the name
// of fs and exits with status 1.
func Main(fs *flag.FlagSet, run func(context.Context) error) {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := fs.Parse(os.Args[1:])
	if err == nil {
		err = run(ctx)
	}
	stop()
	if err != nil {
		fmt.Fprintln(os.Stderr, fs.Name()+":", err)
		os.Exit(1)
	}
}

// Usage is what peak-rss writes and the harness decodes.
type Usage struct {
	Seconds    float64 `json:"seconds"`
	CPUSeconds float64 `json:"cpu_seconds"`
	MaxRSSKiB  int64   `json:"max_rss_kib"`
	ExitCode   int     `json:"exit_code"`
}

// Command cabundle-syncer keeps webhooks[*].clientConfig.caBundle of the
// kim-snatch MutatingWebhookConfiguration in step with the CA in the
// certificate Secret. See package syncer for how, and docs/ for operations.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/kyma-project/kim-snatch/pkg/cmdline"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	// After the first signal, restore the default handling: a second
	// signal ends the process at once instead of waiting for shutdown.
	go func() { <-ctx.Done(); stop() }()

	c := &cli{
		stdout:    os.Stdout,
		stderr:    os.Stderr,
		runSyncer: run,
		// Verbs other than the syncer itself.
		subcommands: []subcommand{
			checkCommand{connect: connectCluster, now: time.Now}.subcommand(),
		},
	}
	err := c.execute(ctx, os.Args[1:])
	stop()
	os.Exit(cmdline.ExitCode(binaryName, err, os.Stderr))
}

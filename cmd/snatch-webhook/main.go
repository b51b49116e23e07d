// Command snatch-webhook serves the mutating admission webhook that gives
// Pods in Kyma-managed namespaces a preferred node affinity for the Kyma
// worker pool. "snatch-webhook mutate -f pod.yaml" runs the same decision
// on a file, without a cluster.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"github.com/kyma-project/kim-snatch/pkg/cmdline"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	// After the first signal, a second one ends the process at once instead
	// of waiting for the drain.
	go func() { <-ctx.Done(); stop() }()

	c := &cli{stdin: os.Stdin, stdout: os.Stdout, stderr: os.Stderr, runWebhook: run}
	err := c.execute(ctx, os.Args[1:])
	stop()
	os.Exit(cmdline.ExitCode(binaryName, err, os.Stderr))
}

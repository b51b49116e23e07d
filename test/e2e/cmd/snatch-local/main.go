// Command snatch-local runs KIM Snatch on a local multi-pool cluster until
// it gets SIGINT or SIGTERM: the control plane, the real node of package
// realnode with deploy/ installed from the local images, plus a Deployment
// in a Kyma-managed namespace and one in a customer namespace, whose Pods
// it shows with their term, Node and pool. `make run` builds and starts it.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"github.com/kyma-project/kim-snatch/pkg/cmdline"
)

const binaryName = "snatch-local"

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	// After the first signal, a second one ends the process at once instead
	// of waiting for the cluster to stop; the children die with it, and the
	// next start cleans up what the node left.
	go func() { <-ctx.Done(); stop() }()

	err := execute(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(cmdline.ExitCode(binaryName, err, os.Stderr))
}

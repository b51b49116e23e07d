// Command snatch-local runs KIM Snatch on a local multi-pool cluster until
// it gets SIGINT or SIGTERM: the control plane, the real node of package
// realnode with deploy/ installed from the local images, plus a Deployment
// in a Kyma-managed namespace and one in a customer namespace, whose Pods
// it shows with their term, Node and pool. `make run` builds and starts it.
package main

import (
	"context"
	"os"

	"github.com/kyma-project/kim-snatch/pkg/cmdline"
)

const binaryName = "snatch-local"

// main stops the cluster at the first signal; a second one ends the process
// at once, the children die with it, and the next start cleans up what the
// node left.
func main() {
	cmdline.Main(binaryName, func(ctx context.Context) error {
		o, err := parse(os.Args[1:], os.Stderr)
		if err != nil {
			return err
		}
		return run(ctx, o, os.Stdout)
	})
}

// Command snatch-webhook serves the mutating admission webhook that gives Pods
// in Kyma-managed namespaces a preferred node affinity for the Kyma worker
// pool. "snatch-webhook mutate -f pod.yaml" runs the same decision on a file,
// without a cluster.
package main

import (
	"context"
	"io"
	"os"

	"github.com/kyma-project/kim-snatch/pkg/affinity"
	"github.com/kyma-project/kim-snatch/pkg/cmdline"
)

const binaryName = "snatch-webhook"

func main() {
	c := &cli{stdin: os.Stdin, stdout: os.Stdout, stderr: os.Stderr, runWebhook: run}
	cmdline.Main(binaryName, func(ctx context.Context) error { return c.execute(ctx, os.Args[1:]) })
}

// cli parses the command line (the webhook is the root command, `mutate` a
// subcommand) for a run function, so that parsing is tested without serving.
type cli struct {
	stdin          io.Reader
	stdout, stderr io.Writer
	runWebhook     func(context.Context, Options) error
}

// execute runs the command named by args (os.Args[1:]).
func (c *cli) execute(ctx context.Context, args []string) error {
	mutate := cmdline.Subcommand{Name: "mutate", Summary: "Show the decision, its reason and the mutated Pod for a Pod manifest, without a cluster.",
		Run: func(_ context.Context, args []string) error { return c.mutate(args) }}
	return cmdline.NewRoot(binaryName, about, defaultOptions, c.runWebhook, mutate).Execute(ctx, args, c.stdout, c.stderr)
}

const about = `Serves the mutating admission webhook that adds a preferred node affinity
for the Kyma worker pool to Pods. Pods opt out with the label
` + affinity.OptOutLabel + `: "` + affinity.OptOutValue + `".`

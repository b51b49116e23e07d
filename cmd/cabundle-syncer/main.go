// Command cabundle-syncer keeps webhooks[*].clientConfig.caBundle of the
// kim-snatch MutatingWebhookConfiguration in step with the CA in the
// certificate Secret. See package syncer for how, and docs/ for operations.
package main

import (
	"context"
	"io"
	"os"
	"time"

	"github.com/kyma-project/kim-snatch/pkg/cmdline"
)

const binaryName = "cabundle-syncer"

func main() {
	c := &cli{stdout: os.Stdout, stderr: os.Stderr, runSyncer: run,
		runCheck: checkCommand{connect: connectCluster, now: time.Now}.run}
	cmdline.Main(binaryName, func(ctx context.Context) error { return c.execute(ctx, os.Args[1:]) })
}

// cli parses the command line (the syncer is the root command, `check` a
// subcommand) and hands the result to a run function, so that parsing and
// validation are tested without starting anything.
type cli struct {
	stdout, stderr io.Writer
	runSyncer      func(context.Context, Options) error
	runCheck       func(ctx context.Context, args []string, stdout, stderr io.Writer) error
}

// execute runs the command named by args (os.Args[1:]).
func (c *cli) execute(ctx context.Context, args []string) error {
	check := cmdline.Subcommand{Name: "check", Summary: "Run the operators' health checklist once (exit 0 PASS, 1 WARN, 2 FAIL, 3 could not run)",
		Run: func(ctx context.Context, args []string) error { return c.runCheck(ctx, args, c.stdout, c.stderr) }}
	return cmdline.NewRoot(binaryName, about, defaultOptions, c.runSyncer, check).Execute(ctx, args, c.stdout, c.stderr)
}

const about = "Keeps webhooks[*].clientConfig.caBundle of a MutatingWebhookConfiguration in step with the CA in a Secret."

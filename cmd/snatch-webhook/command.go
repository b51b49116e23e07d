package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"strings"

	"github.com/kyma-project/kim-snatch/pkg/cmdline"
	"github.com/kyma-project/kim-snatch/pkg/version"
)

const binaryName = "snatch-webhook"

// cli parses the command line and hands the result to a run function, so
// that parsing and validation are tested without starting anything.
//
// The webhook is the root command: `snatch-webhook --flags` serves it. A
// first argument that is not a flag names a subcommand; there is one,
// "mutate".
type cli struct {
	stdin          io.Reader
	stdout, stderr io.Writer
	runWebhook     func(context.Context, Options) error
}

// execute runs the command named by args (os.Args[1:]).
func (c *cli) execute(ctx context.Context, args []string) error {
	if len(args) > 0 && !strings.HasPrefix(args[0], "-") {
		if args[0] == "mutate" {
			return c.mutate(args[1:])
		}
		c.usage(c.newFlagSet(new(Options)))
		return cmdline.UsageError{Err: fmt.Errorf("unknown command %q", args[0])}
	}
	o, err := c.parse(args)
	if err != nil {
		return err
	}
	if o.Version {
		_, err := fmt.Fprintln(c.stdout, version.String(binaryName))
		return err
	}
	return c.runWebhook(ctx, o)
}

// parse turns the webhook's flags into validated Options.
func (c *cli) parse(args []string) (Options, error) {
	o := defaultOptions()
	fs := c.newFlagSet(&o)
	if err := cmdline.ParseFlags(fs, args); err != nil {
		return Options{}, err
	}
	if o.Version {
		return o, nil
	}
	if err := o.Validate(); err != nil {
		return Options{}, cmdline.UsageError{Err: err}
	}
	return o, nil
}

func (c *cli) newFlagSet(o *Options) *flag.FlagSet {
	fs := flag.NewFlagSet(binaryName, flag.ContinueOnError)
	fs.SetOutput(c.stderr)
	o.bindFlags(fs)
	fs.Usage = func() { c.usage(fs) }
	return fs
}

func (c *cli) usage(fs *flag.FlagSet) {
	fmt.Fprintf(c.stderr, `Usage: %[1]s [flags]
       %[1]s mutate -f FILE|- [policy flags]

Serves the mutating admission webhook that adds a preferred node affinity
for the Kyma worker pool to Pods. Pods opt out with the label
kim-snatch.kyma-project.io/opt-out: "true".

Commands:
  mutate     Show the decision, its reason and the mutated Pod for a Pod manifest, without a cluster.

Flags:
`, binaryName)
	fs.PrintDefaults()
}

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

const binaryName = "cabundle-syncer"

// subcommand is a verb of the binary other than the syncer itself, such as
// a future `cabundle-syncer check`. It parses its own arguments.
type subcommand struct {
	name    string
	summary string
	run     func(ctx context.Context, args []string, stdout, stderr io.Writer) error
}

// cli parses the command line and hands the result to a run function, so
// that parsing and validation are tested without starting anything.
//
// The syncer is the root command: `cabundle-syncer --flags` runs it, and
// keeps doing so when verbs are added. A first argument that is not a flag
// names a subcommand.
type cli struct {
	stdout, stderr io.Writer
	runSyncer      func(context.Context, Options) error
	subcommands    []subcommand
}

// execute runs the command named by args (os.Args[1:]).
func (c *cli) execute(ctx context.Context, args []string) error {
	if len(args) > 0 && !strings.HasPrefix(args[0], "-") {
		for _, sc := range c.subcommands {
			if sc.name == args[0] {
				return sc.run(ctx, args[1:], c.stdout, c.stderr)
			}
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
	return c.runSyncer(ctx, o)
}

// parse turns the syncer's flags into validated Options.
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
	fmt.Fprintf(c.stderr, "Usage: %s [flags]\n", binaryName)
	if len(c.subcommands) > 0 {
		fmt.Fprintf(c.stderr, "       %s <command> [flags]\n\nCommands:\n", binaryName)
		for _, sc := range c.subcommands {
			fmt.Fprintf(c.stderr, "  %-10s %s\n", sc.name, sc.summary)
		}
	}
	fmt.Fprintf(c.stderr, "\nKeeps webhooks[*].clientConfig.caBundle of a MutatingWebhookConfiguration in step with the CA in a Secret.\n\nFlags:\n")
	fs.PrintDefaults()
}

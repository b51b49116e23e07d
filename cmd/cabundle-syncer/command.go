package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"

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

// usageError marks errors in the command line, which exit with status 2.
type usageError struct{ err error }

func (e usageError) Error() string { return e.err.Error() }
func (e usageError) Unwrap() error { return e.err }

// execute runs the command named by args (os.Args[1:]).
func (c *cli) execute(ctx context.Context, args []string) error {
	if len(args) > 0 && !strings.HasPrefix(args[0], "-") {
		for _, sc := range c.subcommands {
			if sc.name == args[0] {
				return sc.run(ctx, args[1:], c.stdout, c.stderr)
			}
		}
		c.usage(c.newFlagSet(new(Options)))
		return usageError{fmt.Errorf("unknown command %q", args[0])}
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
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return Options{}, err
		}
		return Options{}, usageError{err}
	}
	if fs.NArg() > 0 {
		return Options{}, usageError{fmt.Errorf("unexpected arguments: %q", fs.Args())}
	}
	if o.Version {
		return o, nil
	}
	if err := o.Validate(); err != nil {
		return Options{}, usageError{err}
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

// exitCode maps the outcome of execute to the process exit status, and
// reports the error.
func exitCode(err error, stderr io.Writer) int {
	var ue usageError
	switch {
	case err == nil, errors.Is(err, flag.ErrHelp):
		return 0
	case errors.As(err, &ue):
		fmt.Fprintf(stderr, "%s: %v\n", binaryName, err)
		return 2
	default:
		fmt.Fprintf(stderr, "%s: %v\n", binaryName, err)
		return 1
	}
}

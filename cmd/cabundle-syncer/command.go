package main

import (
	"context"
	"io"

	"github.com/kyma-project/kim-snatch/pkg/cmdline"
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
	return c.root().Execute(ctx, args)
}

func (c *cli) root() cmdline.Root[Options] {
	subs := make([]cmdline.Subcommand, 0, len(c.subcommands))
	for _, sc := range c.subcommands {
		subs = append(subs, cmdline.Subcommand{Name: sc.name, Summary: sc.summary, Run: func(ctx context.Context, args []string) error {
			return sc.run(ctx, args, c.stdout, c.stderr)
		}})
	}
	return cmdline.Root[Options]{
		Name:        binaryName,
		About:       "Keeps webhooks[*].clientConfig.caBundle of a MutatingWebhookConfiguration in step with the CA in a Secret.",
		Stdout:      c.stdout,
		Stderr:      c.stderr,
		Defaults:    defaultOptions,
		Bind:        (*Options).bindFlags,
		Validate:    Options.Validate,
		Version:     func(o Options) bool { return o.Version },
		Run:         c.runSyncer,
		Subcommands: subs,
	}
}

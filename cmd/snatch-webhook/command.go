package main

import (
	"context"
	"io"

	"github.com/kyma-project/kim-snatch/pkg/affinity"
	"github.com/kyma-project/kim-snatch/pkg/cmdline"
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
	return c.root().Execute(ctx, args)
}

func (c *cli) root() cmdline.Root[Options] {
	return cmdline.Root[Options]{
		Name: binaryName,
		About: `Serves the mutating admission webhook that adds a preferred node affinity
for the Kyma worker pool to Pods. Pods opt out with the label
` + affinity.OptOutLabel + `: "` + affinity.OptOutValue + `".`,
		Stdout:   c.stdout,
		Stderr:   c.stderr,
		Defaults: defaultOptions,
		Bind:     (*Options).bindFlags,
		Validate: func(o Options) error { return o.Validate() },
		Version:  func(o Options) bool { return o.Version },
		Run:      c.runWebhook,
		Subcommands: []cmdline.Subcommand{{
			Name:    "mutate",
			Summary: "Show the decision, its reason and the mutated Pod for a Pod manifest, without a cluster.",
			Run:     func(_ context.Context, args []string) error { return c.mutate(args) },
		}},
	}
}

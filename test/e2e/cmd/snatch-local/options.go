package main

import (
	"errors"
	"flag"
	"fmt"
	"io"

	"github.com/kyma-project/kim-snatch/pkg/cmdline"
)

// Options are the flags of snatch-local.
type Options struct {
	// KymaReplicas and CustomerReplicas size the two demo Deployments.
	KymaReplicas, CustomerReplicas int
}

// maxReplicas keeps the table readable and the Pods within the capacity of
// the kubelet-less Nodes, so that every Pod is bound.
const maxReplicas = 50

// Validate reports every option that cannot work, all at once.
func (o Options) Validate() error {
	var errs []error
	if o.KymaReplicas < 1 || o.KymaReplicas > maxReplicas {
		errs = append(errs, fmt.Errorf("--kyma-replicas must be between 1 and %d, got %d", maxReplicas, o.KymaReplicas))
	}
	if o.CustomerReplicas < 1 || o.CustomerReplicas > maxReplicas {
		errs = append(errs, fmt.Errorf("--customer-replicas must be between 1 and %d, got %d", maxReplicas, o.CustomerReplicas))
	}
	return errors.Join(errs...)
}

// parse turns the flags into validated Options.
func parse(args []string, stderr io.Writer) (Options, error) {
	o := Options{KymaReplicas: 3, CustomerReplicas: 3}
	fs := flag.NewFlagSet(binaryName, flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.IntVar(&o.KymaReplicas, "kyma-replicas", o.KymaReplicas, "Replicas of the Deployment in the Kyma-managed namespace "+kymaNamespace+".")
	fs.IntVar(&o.CustomerReplicas, "customer-replicas", o.CustomerReplicas, "Replicas of the Deployment in the customer namespace "+customerNamespace+".")
	fs.Usage = func() {
		fmt.Fprintf(stderr, `Usage: %s [flags]

Installs deploy/ with the images of make images on a real node beside a
local control plane, with a Kyma worker pool and a customer pool, creates
a Deployment in a Kyma-managed and in a customer namespace, shows where
their Pods went, and keeps everything running until Ctrl-C. It needs root
on Linux (hack/e2e/node-prerequisites.sh).

Flags:
`, binaryName)
		fs.PrintDefaults()
	}
	if err := cmdline.ParseFlags(fs, args); err != nil {
		return Options{}, err
	}
	if err := o.Validate(); err != nil {
		return Options{}, cmdline.UsageError{Err: err}
	}
	return o, nil
}

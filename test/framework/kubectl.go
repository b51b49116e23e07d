package framework

import (
	"context"

	"github.com/kyma-project/kim-snatch/test/process"
)

// KubectlOptions say where a run of kubectl works.
type KubectlOptions struct {
	// Kubeconfig names the cluster, as --kubeconfig; empty for commands
	// that need none, such as kustomize.
	Kubeconfig string
	// Dir is the working directory, for relative -f and -k paths; the
	// test's own when empty.
	Dir string
	// Stdin is the standard input, for -f -.
	Stdin []byte
}

// RunKubectl runs the kubectl of bin/ with args and returns its standard
// output: the one way the tests run kubectl. Its error names the command
// and carries everything it printed, standard error included, so that a
// failed step says why.
func RunKubectl(ctx context.Context, o KubectlOptions, args ...string) (string, error) {
	bin, err := Kubectl()
	if err != nil {
		return "", err
	}
	if o.Kubeconfig != "" {
		args = append([]string{"--kubeconfig", o.Kubeconfig}, args...)
	}
	r, err := process.Command{Dir: o.Dir, Stdin: o.Stdin}.Run(ctx, bin, args...)
	return r.Stdout, err
}

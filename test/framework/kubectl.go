package framework

import (
	"bytes"
	"cmp"
	"context"
	"fmt"
	"os/exec"
	"strings"
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
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Dir = o.Dir
	if o.Stdin != nil {
		cmd.Stdin = bytes.NewReader(o.Stdin)
	}
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		printed := strings.TrimSpace(stdout.String() + stderr.String())
		return stdout.String(), fmt.Errorf("kubectl %s: %w\n%s", strings.Join(args, " "), err, cmp.Or(printed, "(no output)"))
	}
	return stdout.String(), nil
}

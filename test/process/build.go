package process

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"

	"github.com/kyma-project/kim-snatch/test/framework"
)

// TestVersion is the version stamped into binaries built by Build.
const TestVersion = "v0.0.0-test"

// Build builds ./cmd/<name> into dir with hack/build-binary.sh, the script
// the container images use, and returns the path of the binary. The Go
// build cache makes a repeated build cheap.
func Build(ctx context.Context, name, dir string) (string, error) {
	root, err := framework.RepoRoot()
	if err != nil {
		return "", err
	}
	cmd := exec.CommandContext(ctx, "sh", filepath.Join(root, "hack", "build-binary.sh"), name, dir)
	cmd.Dir = root
	cmd.Env = append(os.Environ(), "VERSION="+TestVersion)
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("build %s: %w\n%s", name, err, out)
	}
	return filepath.Join(dir, name), nil
}

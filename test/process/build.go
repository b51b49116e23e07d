package process

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// TestVersion is the version stamped into binaries built by Build.
const TestVersion = "v0.0.0-test"

// Build builds ./cmd/<name> into dir with hack/build-binary.sh, the script
// the container images use, and returns the path of the binary. The Go
// build cache makes a repeated build cheap.
func Build(ctx context.Context, name, dir string) (string, error) {
	// The main module's root, found as the go command finds it: this
	// package is below the framework, which runs its children with Start.
	gomod, err := exec.CommandContext(ctx, "go", "env", "GOMOD").Output()
	if err != nil {
		return "", fmt.Errorf("find the main module: %w", err)
	}
	root := filepath.Dir(strings.TrimSpace(string(gomod)))
	cmd := exec.CommandContext(ctx, "sh", filepath.Join(root, "hack", "build-binary.sh"), name, dir)
	cmd.Dir = root
	cmd.Env = append(os.Environ(), "VERSION="+TestVersion)
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("build %s: %w\n%s", name, err, out)
	}
	return filepath.Join(dir, name), nil
}

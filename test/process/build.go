package process

import (
	"cmp"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"

	"github.com/kyma-project/kim-snatch/test/tools"
)

// TestVersion is the version stamped into binaries built by Build.
const TestVersion = "v0.0.0-test"

// Build builds ./cmd/<name> into dir with hack/build-binary.sh, the script
// the container images use, and returns the path of the binary. env goes
// into the script's environment after VERSION=TestVersion, and wins over
// it. The Go build cache makes a repeated build cheap.
func Build(ctx context.Context, name, dir string, env ...string) (string, error) {
	root, err := tools.RepoRoot()
	if err != nil {
		return "", err
	}
	cmd := exec.CommandContext(ctx, "sh", filepath.Join(root, "hack", "build-binary.sh"), name, dir)
	cmd.Dir = root
	cmd.Env = append(append(os.Environ(), "VERSION="+TestVersion), env...)
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("build %s: %w\n%s", name, err, out)
	}
	return filepath.Join(dir, name), nil
}

// GoBuild builds the command pkg of the module in the folder module, from
// the repository root ("" for the main module, "hack/tools/imagetool" for one
// of hack/tools), into dir, static and stripped as hack/build-binary.sh
// builds, and returns the path of the binary, named as pkg's last element.
// A module of hack/tools is built on its own go.mod, as make builds it.
func GoBuild(ctx context.Context, module, pkg, dir string) (string, error) {
	root, err := tools.RepoRoot()
	if err != nil {
		return "", err
	}
	out := filepath.Join(dir, filepath.Base(pkg))
	cmd := exec.CommandContext(ctx, "go", "build", "-trimpath", "-buildvcs=false", "-ldflags", "-s -w", "-o", out, pkg)
	cmd.Dir = filepath.Join(root, module)
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if module != "" {
		cmd.Env = append(cmd.Env, "GOWORK=off")
	}
	if b, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("build %s of %s: %w\n%s", pkg, cmp.Or(module, "the main module"), err, b)
	}
	return out, nil
}

// built is what Binary built: the folder, made on first use, and by name
// the build of each command in it.
var built struct {
	once   sync.Once
	dir    string
	err    error
	builds sync.Map
}

// Binary returns ./cmd/<name> built by Build once per test binary. A
// TestMain calls RemoveBuilt when the tests end.
func Binary(t testing.TB, name string) string {
	t.Helper()
	v, _ := built.builds.LoadOrStore(name, sync.OnceValues(func() (string, error) {
		built.once.Do(func() { built.dir, built.err = os.MkdirTemp("", "kim-snatch-bin-") })
		if built.err != nil {
			return "", built.err
		}
		return Build(context.Background(), name, built.dir)
	}))
	path, err := v.(func() (string, error))()
	if err != nil {
		t.Fatal(err)
	}
	return path
}

// RemoveBuilt removes what Binary built, if it built anything.
func RemoveBuilt() {
	built.once.Do(func() {}) // nothing built from here on makes a folder
	if built.dir != "" {
		_ = os.RemoveAll(built.dir)
	}
}

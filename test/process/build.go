package process

import (
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

// Build builds a binary of the repository into dir with
// hack/build/build-binary.sh, the one build of the project's own binaries, which
// the container images and the Makefile use too, and returns its path.
// target is snatch-webhook or cabundle-syncer (./cmd/<target>), or the
// folder of a main package from the repository root, built in the module
// that holds it ("test/bench/cmd/generic-webhook", or
// "hack/tools/imagetool/probe" on hack/tools' go.mod); the binary is
// named after its last element. env goes into the script's environment
// after VERSION=TestVersion, and wins over it. The Go build cache makes a
// repeated build cheap.
func Build(ctx context.Context, target, dir string, env ...string) (string, error) {
	root, err := tools.RepoRoot()
	if err != nil {
		return "", err
	}
	cmd := exec.CommandContext(ctx, "sh", filepath.Join(root, "hack", "build", "build-binary.sh"), target, dir)
	cmd.Dir = root
	cmd.Env = append(append(os.Environ(), "VERSION="+TestVersion), env...)
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("build %s: %w\n%s", target, err, out)
	}
	return filepath.Join(dir, filepath.Base(filepath.Clean(target))), nil
}

// built is what Binary built: the folder, made on first use, and by name
// the build of each target in it.
var built struct {
	once   sync.Once
	dir    string
	err    error
	builds sync.Map
}

// Binary returns the binary of target, as Build takes it, built by Build
// once per test binary. A TestMain calls RemoveBuilt when the tests end.
func Binary(t testing.TB, target string) string {
	t.Helper()
	v, _ := built.builds.LoadOrStore(target, sync.OnceValues(func() (string, error) {
		built.once.Do(func() { built.dir, built.err = os.MkdirTemp("", "kim-snatch-bin-") })
		if built.err != nil {
			return "", built.err
		}
		return Build(context.Background(), target, built.dir)
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

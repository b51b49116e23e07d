package tools

import (
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"testing"
)

// Module is the path of the repository's main module.
const Module = "github.com/kyma-project/kim-snatch"

// mainModule matches the module directive of the main module's go.mod.
var mainModule = regexp.MustCompile(`(?m)^module\s+` + regexp.QuoteMeta(Module) + `\s*$`)

// RepoRoot walks up from the working directory to the directory that holds
// the main module's go.mod, so that tests find bin/ and deploy/ wherever go
// test runs them.
func RepoRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		data, err := os.ReadFile(filepath.Join(dir, "go.mod"))
		if err == nil && mainModule.Match(data) {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("repository root not found: no go.mod of module " + Module + " above the working directory")
		}
		dir = parent
	}
}

// MustRepoRoot is RepoRoot for a test, which it fails when there is none.
func MustRepoRoot(t testing.TB) string {
	t.Helper()
	root, err := RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	return root
}

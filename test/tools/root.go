package tools

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
)

// Module is the path of the repository's main module.
const Module = "github.com/kyma-project/kim-snatch"

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
		if err == nil && isMainModule(data) {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("repository root not found: no go.mod of module " + Module + " above the working directory")
		}
		dir = parent
	}
}

func isMainModule(gomod []byte) bool {
	for _, line := range strings.Split(string(gomod), "\n") {
		if f := strings.Fields(line); len(f) == 2 && f[0] == "module" {
			return f[1] == Module
		}
	}
	return false
}

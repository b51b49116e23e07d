package framework

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/kyma-project/kim-snatch/test/tools"
)

// BinDir returns the folder of the control plane binaries (tools.Kubernetes).
func BinDir() (string, error) { return tools.Kubernetes.Find() }

// Kubectl returns the path of the kubectl binary built by `make tools`.
func Kubectl() (string, error) { return binary("kubectl") }

func binary(name string) (string, error) {
	dir, err := BinDir()
	if err != nil {
		return "", err
	}
	path := filepath.Join(dir, name)
	if _, err := os.Stat(path); err != nil {
		return "", fmt.Errorf("control plane binary %s not found (run `make tools`): %w", path, err)
	}
	return path, nil
}

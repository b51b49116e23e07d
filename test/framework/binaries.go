package framework

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// KubernetesVersion is the version of the control plane that `make tools`
// builds into bin/k8s-<version>.
const KubernetesVersion = "v1.36.3"

// BinDirEnv overrides where the control plane binaries are looked up.
const BinDirEnv = "SNATCH_K8S_BIN"

// Component binaries expected in the bin directory.
const (
	etcdBinary              = "etcd"
	apiServerBinary         = "kube-apiserver"
	schedulerBinary         = "kube-scheduler"
	controllerManagerBinary = "kube-controller-manager"
	kubectlBinary           = "kubectl"
)

// BinDir returns the directory that holds the control plane binaries: the
// value of SNATCH_K8S_BIN, or bin/k8s-<version> at the repository root.
func BinDir() (string, error) {
	if dir := os.Getenv(BinDirEnv); dir != "" {
		return dir, nil
	}
	root, err := RepoRoot()
	if err != nil {
		return "", err
	}
	return filepath.Join(root, "bin", "k8s-"+KubernetesVersion), nil
}

// Kubectl returns the path of the kubectl binary built by `make tools`.
func Kubectl() (string, error) {
	return binary(kubectlBinary)
}

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
			return "", errors.New("repository root not found: no go.mod of module github.com/kyma-project/kim-snatch above the working directory")
		}
		dir = parent
	}
}

func isMainModule(gomod []byte) bool {
	for _, line := range strings.Split(string(gomod), "\n") {
		if f := strings.Fields(line); len(f) == 2 && f[0] == "module" {
			return f[1] == "github.com/kyma-project/kim-snatch"
		}
	}
	return false
}

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

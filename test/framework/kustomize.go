package framework

import (
	"bytes"
	"fmt"
	"os/exec"
	"path/filepath"

	"github.com/kyma-project/kim-snatch/test/tools"
)

// Kustomize renders the kustomization in dir, relative to the repository
// root (deploy/default, for one), with the kustomize embedded in kubectl,
// as `kubectl apply -k <dir>` would apply it, and returns the YAML stream.
func Kustomize(dir string) ([]byte, error) {
	kubectl, err := Kubectl()
	if err != nil {
		return nil, err
	}
	root, err := tools.RepoRoot()
	if err != nil {
		return nil, err
	}
	var stderr bytes.Buffer
	cmd := exec.Command(kubectl, "kustomize", filepath.Join(root, dir))
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("kubectl kustomize %s: %w: %s", dir, err, stderr.String())
	}
	return out, nil
}

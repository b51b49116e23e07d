package framework

import (
	"context"
	"path/filepath"

	"github.com/kyma-project/kim-snatch/test/tools"
)

// Kustomize renders the kustomization in dir, relative to the repository
// root (deploy/default, for one) unless absolute, with the kustomize
// embedded in kubectl, as `kubectl apply -k <dir>` would apply it, and
// returns the YAML stream.
func Kustomize(dir string) ([]byte, error) {
	if !filepath.IsAbs(dir) {
		root, err := tools.RepoRoot()
		if err != nil {
			return nil, err
		}
		dir = filepath.Join(root, dir)
	}
	out, err := RunKubectl(context.Background(), KubectlOptions{}, "kustomize", dir)
	return []byte(out), err
}

package stack

import (
	"bytes"
	"fmt"
	"os/exec"
	"path/filepath"

	"github.com/kyma-project/kim-snatch/test/framework"
	"github.com/kyma-project/kim-snatch/test/tools"
)

// Kustomize renders deploy/<base> with kubectl kustomize, as
// `kubectl apply -k deploy/<base>` would apply it.
func Kustomize(base string) ([]byte, error) {
	kubectl, err := framework.Kubectl()
	if err != nil {
		return nil, err
	}
	root, err := tools.RepoRoot()
	if err != nil {
		return nil, err
	}
	var stderr bytes.Buffer
	cmd := exec.Command(kubectl, "kustomize", filepath.Join(root, "deploy", base))
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("kubectl kustomize deploy/%s: %w: %s", base, err, stderr.String())
	}
	return out, nil
}

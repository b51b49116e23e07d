package docs

import (
	"bytes"
	"context"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kyma-project/kim-snatch/test/framework"
	"github.com/kyma-project/kim-snatch/test/tools"
)

// apiServer is a real API server that holds the objects of deploy/default,
// the CRDs they need first: what the documented read-only commands expect
// to find in an installation.
type apiServer struct {
	kubectl, kubeconfig string
}

func startAPIServer(t *testing.T) *apiServer {
	t.Helper()
	kubectl, err := framework.Kubectl()
	if err != nil {
		t.Fatal(err)
	}
	c := framework.New(t, framework.Options{})
	s := &apiServer{kubectl: kubectl, kubeconfig: c.KubeconfigPath}
	root := tools.MustRepoRoot(t)
	for _, args := range [][]string{
		{"apply", "--server-side", "-f", filepath.Join("test", "manifests", "testdata", "crds")},
		{"wait", "--for=condition=Established", "crd", "--all", "--timeout=60s"},
		{"create", "namespace", "kyma-system"},
		{"apply", "--server-side", "-k", "deploy/default"},
	} {
		if _, stderr, err := s.run(root, args...); err != nil {
			t.Fatalf("kubectl %s: %v: %s", strings.Join(args, " "), err, stderr)
		}
	}
	return s
}

// run runs kubectl with args in dir against the API server.
func (s *apiServer) run(dir string, args ...string) (string, string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, s.kubectl, append([]string{"--kubeconfig", s.kubeconfig}, args...)...)
	cmd.Dir = dir
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	return stdout.String(), stderr.String(), err
}

package docs

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/kyma-project/kim-snatch/test/framework"
	"github.com/kyma-project/kim-snatch/test/tools"
)

// apiServer is a real API server that holds the objects of deploy/default,
// the CRDs they need first: what the documented read-only commands expect
// to find in an installation.
type apiServer struct {
	kubeconfig string
}

func startAPIServer(t *testing.T) *apiServer {
	t.Helper()
	c := framework.New(t, framework.Options{})
	s := &apiServer{kubeconfig: c.KubeconfigPath}
	root := tools.MustRepoRoot(t)
	for _, args := range [][]string{
		{"apply", "--server-side", "-f", filepath.Join("test", "manifests", "testdata", "crds")},
		{"wait", "--for=condition=Established", "crd", "--all", "--timeout=60s"},
		{"create", "namespace", "kyma-system"},
		{"apply", "--server-side", "-k", "deploy/default"},
	} {
		if _, err := s.run(root, args...); err != nil {
			t.Fatal(err)
		}
	}
	return s
}

// run runs kubectl with args in dir against the API server and returns
// its standard output; the error carries its standard error
// (framework.RunKubectl).
func (s *apiServer) run(dir string, args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	return framework.RunKubectl(ctx, framework.KubectlOptions{Kubeconfig: s.kubeconfig, Dir: dir}, args...)
}

package tools

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"testing"
)

// KubernetesVersion is the version of the control plane that make builds
// into bin/k8s-<version>.
const KubernetesVersion = "v1.36.3"

// A Tool is a program, or a folder of them, that the make Target builds
// into bin/<Bin>; the Makefile sets Env to its path.
type Tool struct {
	Env, Bin, Target string
}

// The tools, as the Makefile names them.
var (
	Kubernetes        = Tool{Env: "SNATCH_K8S_BIN", Bin: "k8s-" + KubernetesVersion, Target: "make tools"}
	Images            = Tool{Env: "SNATCH_IMAGES", Bin: "images", Target: "make images monitoring-images"}
	NetworkPolicies   = Tool{Env: "SNATCH_KUBE_NETWORK_POLICIES", Bin: "kube-network-policies", Target: "make tools"}
	Neighbours        = Tool{Env: "SNATCH_NEIGHBOURS", Bin: "neighbours", Target: "make tools"}
	Promrules         = Tool{Env: "SNATCH_PROMRULES", Bin: "promrules", Target: "make tools"}
	Dashboards        = Tool{Env: "SNATCH_DASHBOARDS", Bin: "dashboards", Target: "make tools"}
	DeschedulerPolicy = Tool{Env: "SNATCH_DESCHEDULER_POLICY", Bin: "descheduler-policy", Target: "make tools"}
	Cosign            = Tool{Env: "SNATCH_COSIGN", Bin: "cosign", Target: "make tools"}
	CycloneDXGomod    = Tool{Env: "SNATCH_CYCLONEDX_GOMOD", Bin: "cyclonedx-gomod", Target: "make tools"}
	Toxiproxy         = Tool{Env: "SNATCH_TOXIPROXY", Bin: "toxiproxy-server", Target: "make e2e"}
)

// ErrMissing is the error of Find for a tool that is not there.
var ErrMissing = errors.New("tool missing")

// Find returns the path in Env where it is set, or else the tool's place
// under bin/ at the repository root where it exists.
func (tl Tool) Find() (string, error) {
	if p := os.Getenv(tl.Env); p != "" {
		return p, nil
	}
	root, err := RepoRoot()
	if err != nil {
		return "", err
	}
	p := filepath.Join(root, "bin", tl.Bin)
	if _, err := os.Stat(p); errors.Is(err, fs.ErrNotExist) {
		return "", fmt.Errorf("%w: %s is unset and bin/%s does not exist; %s builds it", ErrMissing, tl.Env, tl.Bin, tl.Target)
	} else if err != nil {
		return "", err
	}
	return p, nil
}

// Path returns the tool's path for a test. A missing tool fails the test
// in CI (CI=true), where make test has built every tool, and skips it
// elsewhere, naming the target that builds it.
func (tl Tool) Path(t testing.TB) string {
	t.Helper()
	p, err := tl.Find()
	switch {
	case errors.Is(err, ErrMissing) && !InCI():
		t.Skip(err)
	case err != nil:
		t.Fatal(err)
	}
	return p
}

// InCI reports whether the tests run in CI, where nothing they need may be
// missing.
func InCI() bool { return os.Getenv("CI") == "true" }

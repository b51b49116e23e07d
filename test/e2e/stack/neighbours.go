package stack

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/kyma-project/kim-snatch/test/framework"
	"github.com/kyma-project/kim-snatch/test/tools"
)

// The cluster DNS and Gardener cert-management of test/e2e/neighbours.
const (
	KubeDNS        = "test/e2e/neighbours/kube-dns"
	CertManagement = "test/e2e/neighbours/cert-management"
	// KubeDNSService is the Service in kube-system in front of CoreDNS.
	KubeDNSService = "kube-dns"
)

// NeighbourImages are the archives `make images` writes of what
// InstallNeighbours runs, cert-management's controller and CoreDNS, for
// realnode.ClusterOptions.Images.
var NeighbourImages = []string{"cert-controller-manager.tar", "coredns.tar"}

// InstallNeighbours installs what a Kyma runtime on Gardener runs before
// deploy/ is applied: the cluster DNS, the CRDs of Gardener cert-management
// and prometheus-operator from their modules, and cert-management itself,
// and waits for CoreDNS and cert-management.
func InstallNeighbours(ctx context.Context, kubeconfig string) error {
	dir, err := tools.Neighbours.Find()
	if err != nil {
		return err
	}
	root, err := tools.RepoRoot()
	if err != nil {
		return err
	}
	crds := filepath.Join(dir, "crds")
	steps := [][]string{
		{"apply", "--server-side", "-f", crds},
		{"wait", "--for=condition=Established", "--timeout=1m", "-f", crds},
		{"apply", "--server-side", "-k", filepath.Join(root, KubeDNS)},
		{"apply", "--server-side", "-k", filepath.Join(root, CertManagement)},
		{"-n", "kube-system", "rollout", "status", "--timeout=3m", "deployment/coredns"},
		{"-n", "cert-management", "rollout", "status", "--timeout=3m", "deployment/cert-controller-manager"},
	}
	return kubectlSteps(ctx, kubeconfig, steps)
}

// InstallMonitoring installs the Prometheus stack of Monitoring, as
// kube-prometheus does, and waits until its Prometheus and Alertmanager
// are available.
func InstallMonitoring(ctx context.Context, kubeconfig string) error {
	root, err := tools.RepoRoot()
	if err != nil {
		return err
	}
	ns := []string{"-n", MonitoringNamespace}
	steps := [][]string{
		{"apply", "--server-side", "-k", filepath.Join(root, Monitoring)},
		append(ns, "rollout", "status", "--timeout=3m", "deployment/prometheus-operator", "deployment/kube-state-metrics"),
		append(ns, "wait", "--for=condition=Available", "--timeout=4m", "prometheus/k8s", "prometheus/shoot", "alertmanager/main"),
	}
	return kubectlSteps(ctx, kubeconfig, steps)
}

// kubectlSteps runs kubectl with each of steps in turn, up to the first
// that fails.
func kubectlSteps(ctx context.Context, kubeconfig string, steps [][]string) error {
	for _, args := range steps {
		if _, err := Kubectl(ctx, kubeconfig, args...); err != nil {
			return err
		}
	}
	return nil
}

// Kubectl runs kubectl with args against the cluster of kubeconfig and
// returns its output (framework.RunKubectl).
func Kubectl(ctx context.Context, kubeconfig string, args ...string) (string, error) {
	return framework.RunKubectl(ctx, framework.KubectlOptions{Kubeconfig: kubeconfig}, args...)
}

// CertManagementState returns what to look at when cert-management does
// not issue: the Certificates and Issuers in kyma-system and the tail of
// the controller's log.
func CertManagementState(ctx context.Context, kubeconfig string) string {
	var b strings.Builder
	for _, args := range [][]string{
		{"-n", Namespace, "get", "certificates.cert.gardener.cloud,issuers.cert.gardener.cloud", "-o", "yaml"},
		{"-n", "cert-management", "logs", "deployment/cert-controller-manager", "--tail=40"},
	} {
		out, err := Kubectl(ctx, kubeconfig, args...)
		fmt.Fprintf(&b, "kubectl %s: %v\n%s\n", strings.Join(args, " "), err, out)
	}
	return b.String()
}

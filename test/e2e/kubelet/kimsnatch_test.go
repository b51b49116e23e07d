package kubelet_test

import (
	"bytes"
	"context"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/kyma-project/kim-snatch/test/e2e/certmgmt"
	"github.com/kyma-project/kim-snatch/test/e2e/kimsnatch"
	"github.com/kyma-project/kim-snatch/test/e2e/kubelet"
	"github.com/kyma-project/kim-snatch/test/e2e/stack"
	"github.com/kyma-project/kim-snatch/test/framework"
)

// TestOldKimSnatchInstallation installs the old kim-snatch as it was
// installed, with `kubectl apply -f`, and runs its Deployment's Pod with
// KimSnatch: the API server reaches it through the stand-in's slices, and
// it writes the caBundle with its ServiceAccount's RBAC.
func TestOldKimSnatchInstallation(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a control plane")
	}
	ctx := t.Context()
	c := framework.New(t, framework.Options{Scheduler: true, ControllerManager: true, AggregatorRouting: true})
	skipExternal(t, c)
	cfg := rest.CopyConfig(c.Config)
	cfg.WarningHandler = rest.NoWarnings{}
	cs := kubernetes.NewForConfigOrDie(cfg)
	createNodes(t, c, 2)
	for _, name := range []string{ns, demo} {
		must(t, stack.CreateNamespace(ctx, cs, name, true))
	}
	must(t, certmgmt.InstallCRDs(ctx, cfg))
	ctrl, err := certmgmt.NewController(cfg)
	must(t, err)
	must(t, ctrl.Start(ctx))
	// Gardener's Issuer "kyma", which the old Certificate names and the old
	// installation does not ship.
	issuer := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": certmgmt.Group + "/" + certmgmt.Version, "kind": "Issuer",
		"metadata": map[string]any{"name": "kyma", "namespace": ns},
		"spec":     map[string]any{"selfSigned": map[string]any{}},
	}}
	_, err = dynamic.NewForConfigOrDie(cfg).Resource(certmgmt.IssuerResource).Namespace(ns).Create(ctx, issuer, metav1.CreateOptions{})
	must(t, err)

	var mu sync.Mutex
	var standIns []*kimsnatch.KimSnatch
	k, err := kubelet.Start(ctx, kubelet.Options{
		Config: cfg, Dir: t.TempDir(),
		Runtimes: map[string]kubelet.Runtime{kubelet.KimSnatchImage: kubelet.KimSnatchOptions{
			Started: func(_ *kubelet.Container, k *kimsnatch.KimSnatch) {
				mu.Lock()
				defer mu.Unlock()
				standIns = append(standIns, k)
			},
		}.Runtime()},
		MaxProbePeriod: 500 * time.Millisecond,
		Logf:           t.Logf,
	})
	must(t, err)
	t.Cleanup(k.Stop)

	kubectl := kubectlFor(t, c.KubeconfigPath)
	bin, err := framework.Kubectl()
	must(t, err)
	apply := exec.CommandContext(ctx, bin, "--kubeconfig="+c.KubeconfigPath, "apply", "-f", "-")
	apply.Stdin = bytes.NewReader(kimsnatch.InstallYAML())
	if out, err := apply.CombinedOutput(); err != nil {
		t.Fatalf("kubectl apply the old installation: %v\n%s", err, out)
	}
	kubectl(t, "-n", ns, "rollout", "status", "deploy/kim-snatch-controller-manager", "--timeout=3m")

	// The old binary writes the caBundle as its ServiceAccount.
	err = wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, eventually, true, func(ctx context.Context) (bool, error) {
		mwc, err := cs.AdmissionregistrationV1().MutatingWebhookConfigurations().Get(ctx, kimsnatch.DefaultWebhookConfigName, metav1.GetOptions{})
		if err != nil || len(mwc.Webhooks) == 0 || len(mwc.Webhooks[0].ClientConfig.CABundle) == 0 {
			return false, nil
		}
		return slices.ContainsFunc(mwc.ManagedFields, func(f metav1.ManagedFieldsEntry) bool {
			return f.Manager == kimsnatch.FieldManager
		}), nil
	})
	must(t, err)
	mu.Lock()
	n := len(standIns)
	mu.Unlock()
	if n != 1 {
		t.Fatalf("%d stand-ins started, want 1", n)
	}

	// The API server calls it through the Service's slices.
	var p *corev1.Pod
	err = wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, eventually, true, func(ctx context.Context) (bool, error) {
		p, err = cs.CoreV1().Pods(demo).Create(ctx, demoPod("old"), metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
		if err != nil {
			return false, err
		}
		return hasTerm(p), nil
	})
	if err != nil {
		t.Fatalf("a Pod in %s does not get the old webhook's term: %v; affinity %+v", demo, err, p.Spec.Affinity)
	}
	if out := kubectl(t, "-n", ns, "get", "pods", "-l", "control-plane=controller-manager", "-o", "jsonpath={.items[*].status.containerStatuses[*].ready}"); strings.TrimSpace(out) != "true" {
		t.Errorf("the old Pod's container is not ready: %q", out)
	}
}

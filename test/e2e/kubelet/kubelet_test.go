package kubelet_test

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"

	"github.com/kyma-project/kim-snatch/pkg/syncer"
	"github.com/kyma-project/kim-snatch/test/e2e/certmgmt"
	"github.com/kyma-project/kim-snatch/test/e2e/kubelet"
	"github.com/kyma-project/kim-snatch/test/e2e/stack"
	"github.com/kyma-project/kim-snatch/test/framework"
	"github.com/kyma-project/kim-snatch/test/process"
)

const (
	ns          = "kyma-system"
	demo        = "kyma-demo"
	appLabel    = "app.kubernetes.io/name"
	webhookName = "pods.kim-snatch.kyma-project.io"
	mwcName     = "kim-snatch-mutating-webhook-configuration"
	secretName  = "kim-snatch-certificates"
	eventually  = time.Minute
)

// env is one control plane with the stand-in running the installation of
// deploy/, shared by the steps of TestDeployedInstallation.
type env struct {
	cs         kubernetes.Interface
	k          *kubelet.Kubelet
	kubectl    func(t *testing.T, args ...string) string
	webhookBin string
}

func TestDeployedInstallation(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a control plane")
	}
	ctx := t.Context()
	binDir := t.TempDir()
	var webhookBin, syncerBin string
	var webhookErr, syncerErr error
	var builds sync.WaitGroup
	builds.Go(func() { webhookBin, webhookErr = process.Build(ctx, "snatch-webhook", binDir) })
	builds.Go(func() { syncerBin, syncerErr = process.Build(ctx, "cabundle-syncer", binDir) })
	c := framework.New(t, framework.Options{Scheduler: true, ControllerManager: true, AggregatorRouting: true})
	builds.Wait()
	skipExternal(t, c)
	must(t, webhookErr)
	must(t, syncerErr)

	cfg := rest.CopyConfig(c.Config)
	cfg.WarningHandler = rest.NoWarnings{}
	cs := kubernetes.NewForConfigOrDie(cfg)
	createNodes(t, c, 3)
	for _, name := range []string{ns, demo} {
		must(t, stack.CreateNamespace(ctx, cs, name, true))
	}
	e := &env{cs: cs, kubectl: kubectlFor(t, c.KubeconfigPath), webhookBin: webhookBin}
	e.kubectl(t, "apply", "-f", "test/e2e/kubelet/testdata/monitoring-crds.yaml")
	e.kubectl(t, "wait", "--for=condition=Established", "--timeout=60s",
		"crd/servicemonitors.monitoring.coreos.com", "crd/prometheusrules.monitoring.coreos.com")
	must(t, certmgmt.InstallCRDs(ctx, cfg))
	ctrl, err := certmgmt.NewController(cfg)
	must(t, err)
	must(t, ctrl.Start(ctx))

	e.k, err = kubelet.Start(ctx, kubelet.Options{
		Config:          cfg,
		Dir:             t.TempDir(),
		ProjectionDelay: 2 * time.Second,
		Runtimes: map[string]kubelet.Runtime{
			"snatch-webhook":  kubelet.Binary(webhookBin),
			"cabundle-syncer": kubelet.Binary(syncerBin),
		},
		MaxProbePeriod: 500 * time.Millisecond,
		Logf:           t.Logf,
	})
	must(t, err)
	t.Cleanup(e.k.Stop)

	start := time.Now()
	e.kubectl(t, "apply", "-k", "deploy/webhook")
	e.kubectl(t, "apply", "-k", "deploy/syncer")
	e.kubectl(t, "-n", ns, "rollout", "status", "deploy/snatch-webhook", "--timeout=3m")
	e.kubectl(t, "-n", ns, "rollout", "status", "deploy/cabundle-syncer", "--timeout=3m")
	t.Logf("both Deployments rolled out %s after kubectl apply", time.Since(start).Round(time.Millisecond))

	t.Run("the syncer fills the caBundle as its ServiceAccount", e.testCABundle)
	t.Run("a Pod in a managed namespace gets the term", e.testPlacement)
	t.Run("a rollout restart leaves no gap", e.testRolloutRestart)
	t.Run("slices follow Services and Pod labels", e.testSlices)
	t.Run("the check CronJob runs as a Job", e.testCheckJob)
	t.Run("a killed process is restarted", e.testKilledProcess)
}

// testCABundle: the MutatingWebhookConfiguration's caBundle holds the CA
// of the Secret, written by the syncer's field manager; the syncer leads
// with a Lease named after its Pod, from the downward API.
func (e *env) testCABundle(t *testing.T) {
	ctx := t.Context()
	err := wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, eventually, true, func(ctx context.Context) (bool, error) {
		mwc, err := e.cs.AdmissionregistrationV1().MutatingWebhookConfigurations().Get(ctx, mwcName, metav1.GetOptions{})
		if err != nil {
			return false, nil
		}
		s, err := e.cs.CoreV1().Secrets(ns).Get(ctx, secretName, metav1.GetOptions{})
		if err != nil {
			return false, nil
		}
		ca := bytes.TrimSpace(s.Data["ca.crt"])
		for _, wh := range mwc.Webhooks {
			if len(ca) == 0 || !bytes.Contains(wh.ClientConfig.CABundle, ca) {
				return false, nil
			}
		}
		return slices.ContainsFunc(mwc.ManagedFields, func(f metav1.ManagedFieldsEntry) bool {
			return f.Manager == syncer.FieldManager
		}), nil
	})
	if err != nil {
		t.Fatalf("the caBundle does not hold ca.crt of Secret %s, written by %s: %v", secretName, syncer.FieldManager, err)
	}
	lease, err := e.cs.CoordinationV1().Leases(ns).Get(ctx, "cabundle-syncer", metav1.GetOptions{})
	must(t, err)
	holder, _, _ := strings.Cut(ptr.Deref(lease.Spec.HolderIdentity, ""), "_")
	pod, err := e.cs.CoreV1().Pods(ns).Get(ctx, holder, metav1.GetOptions{})
	if err != nil || pod.Labels[appLabel] != "cabundle-syncer" {
		t.Fatalf("Lease holder %q names no cabundle-syncer Pod: %v", ptr.Deref(lease.Spec.HolderIdentity, ""), err)
	}
}

// testPlacement: the API server calls a webhook replica through the
// stand-in's slices, over TLS verified against the caBundle.
func (e *env) testPlacement(t *testing.T) {
	ctx := t.Context()
	err := wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, eventually, true, func(ctx context.Context) (bool, error) {
		p, err := e.cs.CoreV1().Pods(demo).Create(ctx, demoPod("dry-run"), metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
		if err != nil {
			return false, err
		}
		return hasTerm(p), nil
	})
	must(t, err)
	before := e.failOpen(t)
	p, err := e.cs.CoreV1().Pods(demo).Create(ctx, demoPod("placed"), metav1.CreateOptions{})
	must(t, err)
	if !hasTerm(p) {
		t.Fatalf("Pod %s lacks the term: %+v", p.Name, p.Spec.Affinity)
	}
	if after := e.failOpen(t); after != before {
		t.Fatalf("fail-open count went from %v to %v", before, after)
	}
}

// testRolloutRestart: kubectl rollout restart replaces both replicas;
// the old processes exit and their Pods are deleted, and every Pod
// created meanwhile gets the term.
func (e *env) testRolloutRestart(t *testing.T) {
	ctx := t.Context()
	old := e.webhookPods(t)
	oldPIDs := pidsOf(t, e.webhookBin)
	if len(old) != 2 || len(oldPIDs) != 2 {
		t.Fatalf("before the restart: %d webhook Pods, %d processes; want 2 and 2", len(old), len(oldPIDs))
	}
	before := e.failOpen(t)

	stop := make(chan struct{})
	var created, missing []string
	var createErr error
	var creator sync.WaitGroup
	creator.Go(func() {
		tick := time.NewTicker(100 * time.Millisecond)
		defer tick.Stop()
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			case <-tick.C:
			}
			p, err := e.cs.CoreV1().Pods(demo).Create(ctx, demoPod(fmt.Sprintf("restart-%d", i)), metav1.CreateOptions{})
			if err != nil {
				createErr = err
				return
			}
			created = append(created, p.Name)
			if !hasTerm(p) {
				missing = append(missing, p.Name)
			}
		}
	})
	start := time.Now()
	e.kubectl(t, "-n", ns, "rollout", "restart", "deploy/snatch-webhook")
	e.kubectl(t, "-n", ns, "rollout", "status", "deploy/snatch-webhook", "--timeout=3m")
	// rollout status returns once the old ReplicaSet is scaled down; its
	// Pods may still be terminating.
	err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, eventually, true, func(ctx context.Context) (bool, error) {
		for _, p := range old {
			_, err := e.cs.CoreV1().Pods(ns).Get(ctx, p.Name, metav1.GetOptions{})
			if !apierrors.IsNotFound(err) {
				return false, nil
			}
		}
		return true, nil
	})
	close(stop)
	creator.Wait()
	must(t, err)
	must(t, createErr)
	t.Logf("restart took %s; %d Pods created meanwhile", time.Since(start).Round(time.Millisecond), len(created))
	if len(created) < 10 || len(missing) > 0 {
		t.Errorf("%d of %d Pods created during the restart lack the term: %v", len(missing), len(created), missing)
	}
	if after := e.failOpen(t); after != before {
		t.Errorf("fail-open count went from %v to %v during the restart", before, after)
	}
	for _, pid := range oldPIDs {
		if _, err := os.Stat(fmt.Sprintf("/proc/%d", pid)); err == nil {
			t.Errorf("process %d of an old replica still runs", pid)
		}
	}
	now := e.webhookPods(t)
	newPIDs := pidsOf(t, e.webhookBin)
	if len(now) != 2 || len(newPIDs) != 2 {
		t.Fatalf("after the restart: %d webhook Pods, %d processes; want 2 and 2", len(now), len(newPIDs))
	}
	for _, p := range now {
		if slices.ContainsFunc(old, func(o corev1.Pod) bool { return o.UID == p.UID }) || !ready(&p) {
			t.Errorf("Pod %s is old or not ready", p.Name)
		}
	}
}

// testSlices: a Service created after the Pods gets a slice per Pod that
// reaches that Pod's port; a Pod labelled into a Service's selector gets
// a slice, and loses it with the label; a deleted Service's slices go.
func (e *env) testSlices(t *testing.T) {
	ctx := t.Context()
	pods := e.webhookPods(t)
	metrics := &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: "kubelet-test-metrics", Namespace: ns},
		Spec: corev1.ServiceSpec{
			Selector: map[string]string{appLabel: "snatch-webhook"},
			Ports:    []corev1.ServicePort{{Name: "scrape", Port: 80, TargetPort: intstr.FromString("metrics")}},
		},
	}
	_, err := e.cs.CoreV1().Services(ns).Create(ctx, metrics, metav1.CreateOptions{})
	must(t, err)
	got := e.waitSlices(t, metrics.Name, len(pods))
	for _, s := range got {
		if len(s.Ports) != 1 || ptr.Deref(s.Ports[0].Name, "") != "scrape" {
			t.Fatalf("slice %s has ports %+v, want one named scrape", s.Name, s.Ports)
		}
		body := get(t, fmt.Sprintf("http://%s:%d/metrics", s.Endpoints[0].Addresses[0], *s.Ports[0].Port))
		if !strings.Contains(body, "snatch_webhook_policy_info") {
			t.Errorf("slice %s: /metrics is not the webhook's", s.Name)
		}
	}

	selected := &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: "kubelet-test-selected", Namespace: ns},
		Spec: corev1.ServiceSpec{
			Selector: map[string]string{"kubelet-test/selected": "yes"},
			Ports:    []corev1.ServicePort{{Name: "health", Port: 80, TargetPort: intstr.FromInt32(8081)}},
		},
	}
	_, err = e.cs.CoreV1().Services(ns).Create(ctx, selected, metav1.CreateOptions{})
	must(t, err)
	e.kubectl(t, "-n", ns, "label", "pods", pods[0].Name, "kubelet-test/selected=yes")
	got = e.waitSlices(t, selected.Name, 1)
	if ref := got[0].Endpoints[0].TargetRef; ref == nil || ref.UID != pods[0].UID {
		t.Fatalf("slice %s targets %+v, want Pod %s", got[0].Name, ref, pods[0].Name)
	}
	get(t, fmt.Sprintf("http://%s:%d/readyz", got[0].Endpoints[0].Addresses[0], *got[0].Ports[0].Port))
	e.kubectl(t, "-n", ns, "label", "pods", pods[0].Name, "kubelet-test/selected-")
	e.waitSlices(t, selected.Name, 0)

	must(t, e.cs.CoreV1().Services(ns).Delete(ctx, metrics.Name, metav1.DeleteOptions{}))
	e.waitSlices(t, metrics.Name, 0)
}

// testCheckJob: a Job from the CronJob of deploy/syncer runs `cabundle-syncer
// check` once, with restartPolicy Never, under its read-only identity.
func (e *env) testCheckJob(t *testing.T) {
	ctx := t.Context()
	e.kubectl(t, "-n", ns, "create", "job", "--from=cronjob/kim-snatch-check", "kim-snatch-check-now")
	var pod corev1.Pod
	err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, eventually, true, func(ctx context.Context) (bool, error) {
		list, err := e.cs.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: "job-name=kim-snatch-check-now"})
		if err != nil || len(list.Items) != 1 {
			return false, err
		}
		pod = list.Items[0]
		return pod.Status.Phase == corev1.PodSucceeded || pod.Status.Phase == corev1.PodFailed, nil
	})
	must(t, err)
	var out []byte
	for _, path := range e.k.LogPaths(pod.UID, "check") {
		b, err := os.ReadFile(path)
		must(t, err)
		out = append(out, b...)
	}
	t.Logf("cabundle-syncer check in Pod %s (%s):\n%s", pod.Name, pod.Status.Phase, out)
	cs := pod.Status.ContainerStatuses
	if len(cs) != 1 || cs[0].State.Terminated == nil || cs[0].RestartCount != 0 {
		t.Fatalf("container status %+v, want terminated without restarts", cs)
	}
	if code := cs[0].State.Terminated.ExitCode; code != 0 {
		t.Errorf("check exited with %d, want 0 (PASS)", code)
	}
	e.kubectl(t, "-n", ns, "wait", "--for=condition=Complete", "--timeout=60s", "job/kim-snatch-check-now")
}

// testKilledProcess: a webhook process killed with SIGKILL is started
// again in its Pod, which reports the restart and is Ready again.
func (e *env) testKilledProcess(t *testing.T) {
	pids := pidsOf(t, e.webhookBin)
	if len(pids) == 0 {
		t.Fatal("no webhook process")
	}
	before := e.webhookPods(t)
	must(t, syscall.Kill(pids[0], syscall.SIGKILL))
	err := wait.PollUntilContextTimeout(t.Context(), 100*time.Millisecond, eventually, true, func(ctx context.Context) (bool, error) {
		pods := e.webhookPods(t)
		restarted := 0
		for _, p := range pods {
			s := p.Status.ContainerStatuses
			if !ready(&p) || len(s) != 1 {
				return false, nil
			}
			if s[0].RestartCount == 1 && s[0].LastTerminationState.Terminated != nil && s[0].LastTerminationState.Terminated.ExitCode == 137 {
				restarted++
			}
		}
		return len(pods) == len(before) && restarted == 1, nil
	})
	if err != nil {
		t.Fatalf("no webhook Pod reports one restart after SIGKILL and is Ready: %v", err)
	}
	if now := pidsOf(t, e.webhookBin); len(now) != len(pids) || slices.Contains(now, pids[0]) {
		t.Errorf("webhook processes %v after killing %d of %v", now, pids[0], pids)
	}
}

// waitSlices waits until Service name has n slices of the stand-in, each
// with one Ready endpoint at 127.0.0.1 that targets a running webhook Pod.
func (e *env) waitSlices(t *testing.T, name string, n int) []discoveryv1.EndpointSlice {
	t.Helper()
	var items []discoveryv1.EndpointSlice
	err := wait.PollUntilContextTimeout(t.Context(), 100*time.Millisecond, eventually, true, func(ctx context.Context) (bool, error) {
		list, err := e.cs.DiscoveryV1().EndpointSlices(ns).List(ctx, metav1.ListOptions{
			LabelSelector: discoveryv1.LabelServiceName + "=" + name + "," + discoveryv1.LabelManagedBy + "=" + kubelet.EndpointSliceManager,
		})
		if err != nil {
			return false, err
		}
		items = list.Items
		if len(items) != n {
			return false, nil
		}
		for _, s := range items {
			if s.AddressType != discoveryv1.AddressTypeFQDN || len(s.Endpoints) != 1 || len(s.Ports) != 1 ||
				!slices.Equal(s.Endpoints[0].Addresses, []string{kubelet.EndpointAddress}) ||
				s.Endpoints[0].Conditions.Ready == nil || !*s.Endpoints[0].Conditions.Ready {
				return false, nil
			}
		}
		return true, nil
	})
	if err != nil {
		t.Fatalf("Service %s: want %d Ready slices of %s, have %+v: %v", name, n, kubelet.EndpointSliceManager, items, err)
	}
	return items
}

func (e *env) webhookPods(t *testing.T) []corev1.Pod {
	t.Helper()
	list, err := e.cs.CoreV1().Pods(ns).List(t.Context(), metav1.ListOptions{LabelSelector: appLabel + "=snatch-webhook"})
	must(t, err)
	return list.Items
}

// failOpen is the API server's apiserver_admission_webhook_fail_open_count
// for the webhook.
func (e *env) failOpen(t *testing.T) float64 {
	t.Helper()
	v, err := stack.FailOpenCount(t.Context(), e.cs, webhookName)
	must(t, err)
	return v
}

// createNodes creates n Nodes in the Kyma pool.
func createNodes(t *testing.T, c *framework.Cluster, n int) {
	t.Helper()
	if _, err := c.CreateNodes(t.Context(), framework.KymaPool, n); err != nil {
		t.Fatal(err)
	}
}

// pidsOf lists the processes running the executable path.
func pidsOf(t *testing.T, path string) []int {
	t.Helper()
	entries, err := os.ReadDir("/proc")
	must(t, err)
	var pids []int
	for _, d := range entries {
		pid, err := strconv.Atoi(d.Name())
		if err != nil {
			continue
		}
		if exe, err := os.Readlink(filepath.Join("/proc", d.Name(), "exe")); err == nil && exe == path {
			pids = append(pids, pid)
		}
	}
	return pids
}

func demoPod(name string) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{GenerateName: name + "-"},
		Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "registry.k8s.io/pause:3.10"}}},
	}
}

// hasTerm reports whether p has the webhook's preferred term for the Kyma
// pool.
func hasTerm(p *corev1.Pod) bool { return framework.PoolTerms(p, framework.KymaPool) > 0 }

func ready(p *corev1.Pod) bool {
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

func get(t *testing.T, url string) string {
	t.Helper()
	resp, err := http.Get(url) //nolint:gosec,noctx // a loopback URL from an EndpointSlice
	must(t, err)
	defer func() { _ = resp.Body.Close() }()
	var b bytes.Buffer
	_, _ = b.ReadFrom(resp.Body)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %s", url, resp.Status)
	}
	return b.String()
}

// kubectlFor returns a runner of kubectl against kubeconfig, from the
// repository root, that fails t on error.
func kubectlFor(t *testing.T, kubeconfig string) func(t *testing.T, args ...string) string {
	t.Helper()
	bin, err := framework.Kubectl()
	must(t, err)
	root, err := framework.RepoRoot()
	must(t, err)
	cacheDir := t.TempDir()
	return func(t *testing.T, args ...string) string {
		t.Helper()
		cmd := exec.CommandContext(t.Context(), bin, append([]string{"--kubeconfig=" + kubeconfig, "--cache-dir=" + cacheDir}, args...)...)
		cmd.Dir = root
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("kubectl %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		return string(out)
	}
}

// skipExternal skips a test on an existing cluster: it has kubelets of
// its own, and its Nodes cannot be created.
func skipExternal(t *testing.T, c *framework.Cluster) {
	t.Helper()
	if c.External() {
		t.Skip("needs the local control plane, which has no kubelet")
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

package e2e

import (
	"context"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	networkingv1client "k8s.io/client-go/kubernetes/typed/networking/v1"
	"k8s.io/utils/ptr"

	"github.com/kyma-project/kim-snatch/pkg/check"
	"github.com/kyma-project/kim-snatch/pkg/syncer/syncertest"
	"github.com/kyma-project/kim-snatch/test/e2e/stack"
	"github.com/kyma-project/kim-snatch/test/framework"
	"github.com/kyma-project/kim-snatch/test/framework/poll"
)

// kyma-system runs under Kyma's deny-all (test/e2e/overlay), so each path
// that KIM Snatch needs is open only through an allow it ships. Each test
// here removes one allow, shows the failure it guards, and puts it back.
const (
	allowToAPIServer = "kyma-project.io--kim-snatch-allow-to-apiserver"
	allowToDNS       = "kyma-project.io--kim-snatch-allow-to-dns"
	allowToWebhook   = "kyma-project.io--kim-snatch-check-allow-to-webhook"
	denyAll          = "kyma-project.io--deny-all"
	// apiServerName is a DNS name of the kube-apiserver that its serving
	// certificate carries, which the syncer is given as Gardener gives it
	// one (resolveAPIServerByName).
	apiServerName = "kubernetes.default.svc.cluster.local"
)

// Without its egress to the API server the syncer cannot hold the Lease,
// so a renewal's CA never reaches the caBundle, check says so, and the
// check Job, which needs the same allow, fails. Back in place, the
// caBundle converges without anyone's help.
func TestWithoutTheAPIServerAllowTheSyncerCannotWriteTheCABundle(t *testing.T) {
	framework.InTier(t, framework.Full, "one allow removed; the smoke installs under the deny-all with every allow")
	framework.Alone(t, "it removes the syncer's allow to the API server")
	c := enforcingCluster(t)
	servedAfter(t)
	ctx := context.Background()
	requirePolicy(t, denyAll)
	restore := withoutPolicy(t, allowToAPIServer)

	fp := renewCutOff(t, "cut off from the API server")
	if logs, completed := runCheckJob(t); completed {
		t.Errorf("the check Job completed without its egress to the API server:\n%s", logs)
	}

	healed := time.Now()
	restore()
	if err := sys.WaitBundleHas(ctx, 3*time.Minute, fp); err != nil {
		t.Fatalf("the caBundle did not converge after the allow came back: %v\n%s", err, c.NetworkPolicies.Log()[max(0, len(c.NetworkPolicies.Log())-2000):])
	}
	logf("denyall: the caBundle holds the renewed CA %s after the allow came back", time.Since(healed).Round(time.Millisecond))
}

// On Gardener, Pods reach the kube-apiserver by a DNS name, which Gardener
// injects as KUBERNETES_SERVICE_HOST, and resolve it with the shoot's
// CoreDNS (test/e2e/neighbours/kube-dns). So given, the syncer keeps the
// caBundle in sync under the deny-all through its DNS allow; without the
// allow it cannot find the API server, loses the Lease, check says so, and
// a renewal's CA never reaches the caBundle. Back in place, the caBundle
// converges without anyone's help.
func TestWithoutTheDNSAllowTheSyncerCannotFindTheAPIServer(t *testing.T) {
	framework.InTier(t, framework.Full, "one allow removed; the smoke installs under the deny-all with every allow")
	framework.Alone(t, "it removes the syncer's allow to DNS")
	enforcingCluster(t)
	servedAfter(t)
	ctx := context.Background()
	requirePolicy(t, denyAll)
	requirePolicy(t, allowToDNS)
	resolveAPIServerByName(t, kubeDNSClusterIP(t))
	fp, err := sys.Renew(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := sys.WaitBundleHas(ctx, 3*time.Minute, fp); err != nil {
		t.Fatalf("the syncer, finding the API server by name, did not sync a renewal with its DNS allow in place: %v", err)
	}
	logf("denyall: the syncer finds the API server by name and syncs a renewal")

	restore := withoutPolicy(t, allowToDNS)
	fp = renewCutOff(t, "unable to resolve the API server")

	healed := time.Now()
	restore()
	if err := sys.WaitBundleHas(ctx, 3*time.Minute, fp); err != nil {
		t.Fatalf("the caBundle did not converge after the allow came back: %v", err)
	}
	logf("denyall: the caBundle holds the renewed CA %s after the DNS allow came back", time.Since(healed).Round(time.Millisecond))
}

// renewCutOff restarts the syncer's containers, whose connections opened
// before an allow was removed stay established, renews the CA, and waits
// until check fails syncer-lease: the syncer, as why says, cannot hold the
// Lease, so the renewed CA must not reach the caBundle. It returns the
// renewed CA's fingerprint.
func renewCutOff(t *testing.T, why string) string {
	t.Helper()
	restartSyncerContainers(t)
	fp, err := sys.Renew(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	args := []string{"--kubeconfig", sys.KubeconfigPath(), "-o", "json"}
	run, r, seen := newChecker(t).waitReport(t, nil, 2*time.Minute, args, func(r check.Report) bool {
		return result(r, check.IDSyncerLease).Status == check.StatusFail
	})
	if !seen {
		t.Errorf("check never failed %s with the syncer %s:\n%s", check.IDSyncerLease, why, run)
	}
	logf("denyall: syncer %s, %s: %s", why, check.IDSyncerLease, result(r, check.IDSyncerLease).Message)
	if bundleHas(t, fp) {
		t.Errorf("the caBundle holds the renewed CA %s although the syncer is %s", fp, why)
	}
	return fp
}

// kubeDNSClusterIP is the ClusterIP of the Service kube-dns: the resolver
// the kubelet gives a Pod under dnsPolicy ClusterFirst on a shoot without
// NodeLocalDNS.
func kubeDNSClusterIP(t *testing.T) string {
	t.Helper()
	dns, err := sys.Clientset().CoreV1().Services("kube-system").Get(context.Background(), stack.KubeDNSService, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return dns.Spec.ClusterIP
}

// resolveAPIServerByName rolls the syncer out as Gardener runs it: with
// KUBERNETES_SERVICE_HOST set to apiServerName, and nameserver as its
// resolver, the one the kubelet gives a Pod under dnsPolicy ClusterFirst.
// The real node's kubelet gives Pods no resolver, so the Pod names it
// itself. At cleanup the syncer rolls back to its shipped template.
func resolveAPIServerByName(t *testing.T, nameserver string) {
	t.Helper()
	ctx := context.Background()
	ns, ok := sys.(*nodeSystem)
	if !ok {
		t.Skipf("%T: the syncer resolves names as its cluster does", sys)
	}
	deployments := sys.Clientset().AppsV1().Deployments(stack.Namespace)
	d, err := deployments.Get(ctx, stack.SyncerName, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	shipped := d.Spec.Template.DeepCopy()
	pod := &d.Spec.Template.Spec
	pod.DNSPolicy = corev1.DNSNone
	pod.DNSConfig = &corev1.PodDNSConfig{
		Nameservers: []string{nameserver},
		Searches:    []string{stack.Namespace + ".svc.cluster.local", "svc.cluster.local", "cluster.local"},
		Options:     []corev1.PodDNSConfigOption{{Name: "ndots", Value: ptr.To("5")}},
	}
	for i := range pod.Containers {
		pod.Containers[i].Env = append(pod.Containers[i].Env, corev1.EnvVar{Name: "KUBERNETES_SERVICE_HOST", Value: apiServerName})
	}
	if _, err := deployments.Update(ctx, d, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		d, err := deployments.Get(ctx, stack.SyncerName, metav1.GetOptions{})
		if err == nil {
			d.Spec.Template = *shipped
			_, err = deployments.Update(ctx, d, metav1.UpdateOptions{})
		}
		if err == nil {
			_, err = ns.waitRollout(ctx, stack.SyncerName)
		}
		if err != nil {
			t.Errorf("roll the syncer back to its shipped template: %v", err)
		}
	})
	if _, err := ns.waitRollout(ctx, stack.SyncerName); err != nil {
		t.Fatal(err)
	}
}

// Without its egress to the webhook's Pods the check Job cannot dial them,
// and served-certificate fails: the Job fails. Back in place, it passes.
func TestWithoutTheWebhookAllowTheCheckJobCannotVerifyTheServedCertificate(t *testing.T) {
	framework.InTier(t, framework.Full, "one allow removed; the smoke installs under the deny-all with every allow")
	framework.Alone(t, "it removes the check Job's allow to the webhook")
	enforcingCluster(t)
	requirePolicy(t, denyAll)
	restore := withoutPolicy(t, allowToWebhook)
	logs, completed := runCheckJob(t)
	if completed {
		t.Errorf("the check Job completed without its egress to the webhook's Pods:\n%s", logs)
	}
	if got := itemStatus(logs, check.IDServedCertificate); got != string(check.StatusFail) {
		t.Errorf("%s is %q without the egress to the webhook's Pods, want FAIL:\n%s", check.IDServedCertificate, got, logs)
	}
	restore()
	if logs, completed := runCheckJob(t); !completed {
		t.Errorf("the check Job failed with the allow back in place:\n%s", logs)
	}
}

// Each ingress rule of the webhook's policy admits one path: without the
// webhook port's, a caller that is not root on the node (as the API
// server is on Gardener, where it calls from the seed) is dropped; without
// the metrics port's, a labelled scraper is. Back in place, both pass.
func TestWithoutEachIngressRuleOfTheWebhookItsCallersAreDropped(t *testing.T) {
	framework.InTier(t, framework.Full, "one allow removed; the smoke installs under the deny-all with every allow")
	framework.Alone(t, "it removes each ingress rule of the webhook's policy")
	c := enforcingCluster(t)
	requirePolicy(t, denyAll)
	webhook := systemPod(t, stack.WebhookName)
	scrapers := namespace(t, "denyall-scrape", false)
	bin := hostProbeBinary(t)
	cases := []struct {
		name, port string
		dial       func(t *testing.T, attempt string) probeResult
	}{
		{"without_webhook_rule_caller_dropped", "webhook", func(t *testing.T, _ string) probeResult {
			return hostProbe(t, bin, "tls", hostPort(webhook.Status.PodIP, webhookPort))
		}},
		{"without_metrics_rule_scraper_dropped", "metrics", func(t *testing.T, attempt string) probeResult {
			return probe(t, scrapers, "scraper-"+attempt, map[string]string{scraperLabel: "allowed"}, "tcp", hostPort(webhook.Status.PodIP, metricsPort))
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			restore := withoutIngressRule(t, stack.WebhookName, tc.port)
			if r := tc.dial(t, "without"); !r.dropped() {
				t.Errorf("without the %s rule the connection was not dropped: %s", tc.port, r)
			}
			restore()
			if r := tc.dial(t, "with"); !r.ok {
				t.Errorf("with the %s rule back the connection failed: %s", tc.port, r)
			}
		})
	}
	logVerdicts(t, c, map[string]float64{})
}

// requirePolicy fails t unless NetworkPolicy name is in kyma-system.
func requirePolicy(t *testing.T, name string) {
	t.Helper()
	if _, err := sys.Clientset().NetworkingV1().NetworkPolicies(stack.Namespace).Get(context.Background(), name, metav1.GetOptions{}); err != nil {
		t.Fatalf("NetworkPolicy %s/%s: %v", stack.Namespace, name, err)
	}
}

// savedPolicy returns the NetworkPolicies of kyma-system and a copy of
// policy name as it is, for a break to restore.
func savedPolicy(t *testing.T, name string) (networkingv1client.NetworkPolicyInterface, *networkingv1.NetworkPolicy) {
	t.Helper()
	policies := sys.Clientset().NetworkingV1().NetworkPolicies(stack.Namespace)
	saved, err := policies.Get(context.Background(), name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return policies, saved
}

// withoutPolicy deletes NetworkPolicy name from kyma-system; what it
// returns, also run at cleanup, creates it again as it was.
func withoutPolicy(t *testing.T, name string) func() {
	t.Helper()
	policies := sys.Clientset().NetworkingV1().NetworkPolicies(stack.Namespace)
	saved := deleteSaved(t, policies, name)
	logf("denyall: removed NetworkPolicy %s", name)
	restore := sync.OnceFunc(func() {
		np := &networkingv1.NetworkPolicy{ObjectMeta: metav1.ObjectMeta{Name: saved.Name, Labels: saved.Labels}, Spec: saved.Spec}
		if _, err := policies.Create(context.Background(), np, metav1.CreateOptions{}); err != nil {
			t.Errorf("restore NetworkPolicy %s: %v", name, err)
		}
		logf("denyall: restored NetworkPolicy %s", name)
	})
	t.Cleanup(restore)
	return restore
}

// withoutIngressRule removes from NetworkPolicy name the ingress rules that
// open port; what it returns, also run at cleanup, puts them back.
func withoutIngressRule(t *testing.T, name, port string) func() {
	t.Helper()
	return editPolicy(t, name, "the "+port+" ingress rule", func(spec *networkingv1.NetworkPolicySpec) {
		was := len(spec.Ingress)
		spec.Ingress = slices.DeleteFunc(spec.Ingress, func(r networkingv1.NetworkPolicyIngressRule) bool {
			return slices.ContainsFunc(r.Ports, func(p networkingv1.NetworkPolicyPort) bool { return p.Port != nil && p.Port.String() == port })
		})
		if len(spec.Ingress) != was-1 {
			t.Fatalf("NetworkPolicy %s has %d ingress rules for port %s, want one", name, was-len(spec.Ingress), port)
		}
	})
}

// editPolicy changes the spec of NetworkPolicy name in kyma-system with
// edit, which may fail t; what it returns, also run at cleanup, puts the
// spec back. what names the change in the log.
func editPolicy(t *testing.T, name, what string, edit func(*networkingv1.NetworkPolicySpec)) func() {
	t.Helper()
	policies, saved := savedPolicy(t, name)
	cut := saved.DeepCopy()
	edit(&cut.Spec)
	if _, err := policies.Update(context.Background(), cut, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	logf("denyall: removed %s of NetworkPolicy %s", what, name)
	restore := sync.OnceFunc(func() {
		np, err := policies.Get(context.Background(), name, metav1.GetOptions{})
		if err == nil {
			np.Spec = saved.Spec
			_, err = policies.Update(context.Background(), np, metav1.UpdateOptions{})
		}
		if err != nil {
			t.Errorf("restore NetworkPolicy %s: %v", name, err)
		}
		logf("denyall: restored %s of NetworkPolicy %s", what, name)
	})
	t.Cleanup(restore)
	return restore
}

// restartSyncerContainers SIGKILLs the process of every syncer container,
// as a crash would, and waits until the kubelet has started it again in
// its Pod. kube-network-policies already knows the Pod's address then, so
// it judges the new process's connections as the Pod's. A new Pod's first
// connections are not: without NRI, which containerd 1.6 lacks, it learns
// a Pod's address from the Pod's status only (see probeAfter).
func restartSyncerContainers(t *testing.T) {
	t.Helper()
	restarts := map[string]int32{}
	for _, p := range runningPods(t, stack.SyncerName) {
		restarts[p.Name] = restartCount(p)
		pids := containerProcesses("/"+stack.SyncerName, p.UID)
		if len(pids) != 1 {
			t.Fatalf("want one /%s process in Pod %s, found %v", stack.SyncerName, p.Name, pids)
		}
		if err := syscall.Kill(pids[0], syscall.SIGKILL); err != nil {
			t.Fatal(err)
		}
	}
	logf("denyall: SIGKILLed the syncer containers of %d Pods", len(restarts))
	what := fmt.Sprintf("the kubelet to restart the syncer containers of %v", slices.Sorted(maps.Keys(restarts)))
	err := poll.Until(context.Background(), what, func(ctx context.Context) error {
		for name, before := range restarts {
			p, err := sys.Clientset().CoreV1().Pods(stack.Namespace).Get(ctx, name, metav1.GetOptions{})
			if err != nil {
				return err
			}
			if n := restartCount(*p); n <= before {
				return fmt.Errorf("Pod %s: %d restarts, %d before", name, n, before)
			}
		}
		return nil
	}, poll.Timeout(2*time.Minute))
	if err != nil {
		t.Fatal(err)
	}
}

// restartCount is how often the kubelet restarted the Pod's containers.
func restartCount(p corev1.Pod) int32 {
	var n int32
	for _, c := range p.Status.ContainerStatuses {
		n += c.RestartCount
	}
	return n
}

// bundleHas reports whether every caBundle holds the CA fp.
func bundleHas(t *testing.T, fp string) bool {
	t.Helper()
	mwc, err := sys.Clientset().AdmissionregistrationV1().MutatingWebhookConfigurations().Get(context.Background(), stack.WebhookConfigName, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return syncertest.EveryBundleHas(mwc, fp)
}

// runCheckJob runs the check as docs/operations.md ("Run the check in the
// cluster") does, in a Job from the CronJob, and returns its log and
// whether it completed (rather than failed).
func runCheckJob(t *testing.T) (string, bool) {
	t.Helper()
	return runCheckJobNamed(t, fmt.Sprintf("kim-snatch-check-e2e-%d", time.Now().UnixNano()))
}

// runCheckJobNamed is runCheckJob with the Job named job.
func runCheckJobNamed(t *testing.T, job string) (string, bool) {
	t.Helper()
	ctx := context.Background()
	kc := sys.KubeconfigPath()
	ns := []string{"-n", stack.Namespace}
	if _, err := stack.Kubectl(ctx, kc, append(ns, "create", "job", "--from=cronjob/kim-snatch-check", job)...); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_, _ = stack.Kubectl(context.Background(), kc, append(ns, "delete", "job", job, "--wait=false")...)
	})
	var completed bool
	err := poll.Until(ctx, "check Job "+job+" to complete or fail", func(ctx context.Context) error {
		j, err := sys.Clientset().BatchV1().Jobs(stack.Namespace).Get(ctx, job, metav1.GetOptions{})
		if err != nil {
			return err
		}
		completed = j.Status.Succeeded > 0
		if !completed && j.Status.Failed == 0 {
			return fmt.Errorf("%d active, %d ready", j.Status.Active, ptr.Deref(j.Status.Ready, 0))
		}
		return nil
	}, poll.Timeout(4*time.Minute))
	if err != nil {
		t.Fatal(err)
	}
	logs, err := stack.Kubectl(ctx, kc, append(ns, "logs", "job/"+job)...)
	if err != nil {
		logs = fmt.Sprintf("(no log: %v)", err)
	}
	logf("check Job %s completed=%v:\n%s", job, completed, logs)
	return logs, completed
}

// itemStatus returns the status of item id in the check's text report.
func itemStatus(report, id string) string {
	m := regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(id) + `\s+(\w+)`).FindStringSubmatch(report)
	if m == nil {
		return ""
	}
	return strings.TrimSpace(m[1])
}

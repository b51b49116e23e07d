package e2e

import (
	"context"
	"fmt"
	"maps"
	"net"
	"slices"
	"strings"
	"testing"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	"github.com/kyma-project/kim-snatch/pkg/check"
	"github.com/kyma-project/kim-snatch/test/e2e/stack"
	"github.com/kyma-project/kim-snatch/test/framework"
	"github.com/kyma-project/kim-snatch/test/framework/poll"
	"github.com/kyma-project/kim-snatch/test/process"
	"github.com/kyma-project/kim-snatch/test/realnode"
)

// On a shoot with NodeLocalDNS, a Pod's resolver is node-local-dns, a
// hostNetwork Pod on its node at 169.254.20.10, which no Pod selector
// names. So given, under the deny-all, the syncer finds the API server by
// name and repairs a wiped caBundle through the shipped DNS allow, and
// check passes. With the allow as it was before it named that address (the
// cluster's DNS Pods only), kube-network-policies drops the syncer's
// queries to node-local-dns: a wiped caBundle stays empty, and check fails
// ca-bundle and syncer-lease. Back to the shipped allow, the caBundle
// converges without anyone's help.
func TestNodeLocalDNSResolvesForTheSyncerUnderTheDenyAll(t *testing.T) {
	framework.InTier(t, framework.Full, "one resolver shape of Gardener; the smoke installs with the cluster's DNS Pods")
	framework.Alone(t, "it puts NodeLocalDNS in front of the cluster's DNS and wipes the caBundle")
	cluster := enforcingCluster(t)
	servedAfter(t)
	ctx := context.Background()
	requirePolicy(t, denyAll)
	requirePolicy(t, allowToDNS)
	c := newChecker(t)
	fp := secretCAFingerprint(t)
	// Runs after the allow and the syncer are back as shipped, also when
	// the test failed with the caBundle wiped.
	t.Cleanup(func() {
		if err := sys.WaitBundleHas(context.Background(), 5*time.Minute, fp); err != nil {
			t.Errorf("the caBundle is not back as found: %v", err)
		}
	})
	startNodeLocalDNS(t)
	resolveAPIServerByName(t, stack.NodeLocalDNSAddress)

	if err := wipeCABundle(ctx, sys.Clientset()); err != nil {
		t.Fatal(err)
	}
	if err := sys.WaitBundleHas(ctx, 3*time.Minute, fp); err != nil {
		t.Fatalf("with the shipped DNS allow, the syncer resolving through node-local-dns did not repair a wiped caBundle: %v", err)
	}
	assertResolverAskedBySyncer(t)
	waitCheckPasses(t, c, "the syncer resolving through node-local-dns")

	restore := editPolicy(t, allowToDNS, "the ipBlock rules", withoutIPBlockRules(t))
	logFrom := len(cluster.NetworkPolicies.Log())
	restartSyncerContainers(t)
	args := []string{"--kubeconfig", sys.KubeconfigPath(), "-o", "json"}
	if run, _, seen := c.waitReport(t, nil, 2*time.Minute, args, func(r check.Report) bool {
		return result(r, check.IDSyncerLease).Status == check.StatusFail
	}); !seen {
		t.Fatalf("check never failed %s with the DNS allow as before:\n%s", check.IDSyncerLease, run)
	}
	if err := wipeCABundle(ctx, sys.Clientset()); err != nil {
		t.Fatal(err)
	}
	waitSyncerQueriesDropped(t, cluster, logFrom)
	if !bundleEmpty(t) {
		t.Errorf("the caBundle is no longer empty although the syncer cannot resolve the API server")
	}
	assertCheckSaysBundleEmpty(t, c)

	healed := time.Now()
	restore()
	if err := sys.WaitBundleHas(ctx, 5*time.Minute, fp); err != nil {
		t.Fatalf("the caBundle did not converge after the shipped DNS allow came back: %v", err)
	}
	logf("nodelocaldns: the caBundle holds the CA %s after the shipped DNS allow came back", time.Since(healed).Round(time.Millisecond))
	waitCheckPasses(t, c, "the shipped DNS allow back")
}

// withoutIPBlockRules returns the edit that takes the DNS allow back to
// what it was before it named node-local-dns: its rules to the cluster's
// DNS Pods only.
func withoutIPBlockRules(t *testing.T) func(*networkingv1.NetworkPolicySpec) {
	return func(spec *networkingv1.NetworkPolicySpec) {
		spec.Egress = slices.DeleteFunc(spec.Egress, func(r networkingv1.NetworkPolicyEgressRule) bool {
			return slices.ContainsFunc(r.To, func(p networkingv1.NetworkPolicyPeer) bool { return p.IPBlock != nil })
		})
		for _, r := range spec.Egress {
			for _, p := range r.To {
				if p.PodSelector == nil || p.PodSelector.MatchLabels["k8s-app"] != "kube-dns" {
					t.Fatalf("NetworkPolicy %s keeps a rule to %+v, want the cluster's DNS Pods only", allowToDNS, p)
				}
			}
		}
		if len(spec.Egress) == 0 {
			t.Fatalf("NetworkPolicy %s has no rule to the cluster's DNS Pods", allowToDNS)
		}
	}
}

// startNodeLocalDNS runs node-local-dns as Gardener runs it: a hostNetwork
// Pod in kube-system, labelled k8s-app: node-local-dns, whose cache
// listens on stack.NodeLocalDNSAddress on the node and forwards to the
// Service kube-dns. node-local-dns binds that address on a dummy link of
// its own; this kernel has no dummy links, so the address goes on the
// node's empty bridge, which the node removes at its end, also after a
// killed run. It waits until the cache answers the API server's name from
// the host, and removes everything at cleanup.
func startNodeLocalDNS(t *testing.T) {
	t.Helper()
	ctx := context.Background()
	addr := []string{stack.NodeLocalDNSAddress + "/32", "dev", realnode.ContainDevice}
	process.Run(t, "ip", append([]string{"addr", "add"}, addr...)...)
	t.Cleanup(func() {
		// t's context has ended by the time its cleanups run.
		if _, err := (process.Command{}).Run(ctx, "ip", append([]string{"addr", "del"}, addr...)...); err != nil {
			t.Error(err)
		}
	})
	cs := sys.Clientset()
	cm, pod := nodeLocalDNSObjects(kubeDNSClusterIP(t))
	if _, err := cs.CoreV1().ConfigMaps(cm.Namespace).Create(ctx, cm, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := cs.CoreV1().Pods(pod.Namespace).Create(ctx, pod, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { deleteNodeLocalDNS(t, cm, pod) })
	err := poll.Until(ctx, "node-local-dns Ready", podIsReady(cs, pod.Namespace, pod.Name), poll.Timeout(2*time.Minute))
	if err != nil {
		t.Fatal(err)
	}
	want := firstServiceIP(t)
	var got []string
	what := fmt.Sprintf("node-local-dns at %s to resolve %s to %s", stack.NodeLocalDNSAddress, apiServerName, want)
	err = poll.Until(ctx, what, func(ctx context.Context) error {
		var err error
		if got, err = nodeLocalResolver().LookupHost(ctx, apiServerName); err != nil {
			return err
		}
		if !slices.Contains(got, want) {
			return fmt.Errorf("it resolves it to %v", got)
		}
		return nil
	}, poll.Timeout(time.Minute))
	if err != nil {
		t.Fatal(err)
	}
	logf("nodelocaldns: node-local-dns at %s resolves %s to %v", stack.NodeLocalDNSAddress, apiServerName, got)
}

// nodeLocalResolver asks node-local-dns alone.
func nodeLocalResolver() *net.Resolver {
	return &net.Resolver{PreferGo: true, Dial: func(ctx context.Context, network, _ string) (net.Conn, error) {
		var d net.Dialer
		return d.DialContext(ctx, network, hostPort(stack.NodeLocalDNSAddress, 53))
	}}
}

// deleteNodeLocalDNS deletes node-local-dns and waits until its Pod is
// gone, so that nothing listens on the address when it is removed.
func deleteNodeLocalDNS(t *testing.T, cm *corev1.ConfigMap, pod *corev1.Pod) {
	ctx := context.Background()
	cs := sys.Clientset()
	if err := cs.CoreV1().Pods(pod.Namespace).Delete(ctx, pod.Name, metav1.DeleteOptions{GracePeriodSeconds: ptr.To[int64](0)}); err != nil {
		t.Errorf("delete Pod %s/%s: %v", pod.Namespace, pod.Name, err)
	}
	err := poll.Until(ctx, "Pod "+pod.Namespace+"/"+pod.Name+" gone after its deletion", podIsGone(cs, pod.Namespace, pod.Name),
		poll.Timeout(2*time.Minute))
	if err != nil {
		t.Error(err)
	}
	if err := cs.CoreV1().ConfigMaps(cm.Namespace).Delete(ctx, cm.Name, metav1.DeleteOptions{}); err != nil {
		t.Errorf("delete ConfigMap %s/%s: %v", cm.Namespace, cm.Name, err)
	}
}

// nodeLocalDNSObjects are node-local-dns's Corefile and Pod: CoreDNS bound
// to the link-local address only, logging each query, forwarding over TCP
// to upstream, the kube-dns ClusterIP, as Gardener's node-local-dns
// forwards the cluster's names. It runs as root, which binding port 53
// needs without file capabilities, with no capability but that one.
func nodeLocalDNSObjects(upstream string) (*corev1.ConfigMap, *corev1.Pod) {
	labels := map[string]string{"k8s-app": stack.NodeLocalDNSName}
	meta := metav1.ObjectMeta{Name: stack.NodeLocalDNSName, Namespace: metav1.NamespaceSystem, Labels: labels}
	cm := &corev1.ConfigMap{ObjectMeta: meta, Data: map[string]string{"Corefile": ".:53 {\n" +
		"    bind " + stack.NodeLocalDNSAddress + "\n" +
		"    errors\n    log\n    cache 30\n" +
		"    ready " + hostPort(stack.NodeLocalDNSAddress, 8181) + "\n" +
		"    forward . " + upstream + " {\n        force_tcp\n    }\n}\n"}}
	pod := &corev1.Pod{ObjectMeta: meta, Spec: corev1.PodSpec{
		HostNetwork:                  true,
		DNSPolicy:                    corev1.DNSDefault,
		AutomountServiceAccountToken: ptr.To(false),
		NodeSelector:                 map[string]string{realnode.SystemNodeLabel: "true"},
		Tolerations:                  []corev1.Toleration{{Key: realnode.SystemNodeLabel, Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule}},
		SecurityContext:              &corev1.PodSecurityContext{SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault}},
		Containers: []corev1.Container{{
			Name:            "node-cache",
			Image:           stack.CoreDNSImage,
			ImagePullPolicy: corev1.PullNever,
			Args:            []string{"-conf", "/etc/coredns/Corefile"},
			ReadinessProbe: &corev1.Probe{ProbeHandler: corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{
				Host: stack.NodeLocalDNSAddress, Path: "/ready", Port: intstr.FromInt32(8181),
			}}},
			SecurityContext: &corev1.SecurityContext{
				RunAsUser:                ptr.To[int64](0),
				AllowPrivilegeEscalation: ptr.To(false),
				ReadOnlyRootFilesystem:   ptr.To(true),
				Capabilities:             &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}, Add: []corev1.Capability{"NET_BIND_SERVICE"}},
			},
			VolumeMounts: []corev1.VolumeMount{{Name: "config", MountPath: "/etc/coredns"}},
		}},
		Volumes: []corev1.Volume{{Name: "config", VolumeSource: corev1.VolumeSource{
			ConfigMap: &corev1.ConfigMapVolumeSource{LocalObjectReference: corev1.LocalObjectReference{Name: meta.Name}},
		}}},
	}}
	return cm, pod
}

// assertResolverAskedBySyncer holds node-local-dns's query log to having
// answered the API server's name to a syncer Pod: the syncer resolved
// through it, not another way.
func assertResolverAskedBySyncer(t *testing.T) {
	t.Helper()
	log := podLog(t, metav1.NamespaceSystem, stack.NodeLocalDNSName, time.Time{})
	for _, p := range runningPods(t, stack.SyncerName) {
		for _, l := range strings.Split(log, "\n") {
			if strings.Contains(l, p.Status.PodIP+":") && strings.Contains(l, apiServerName+".") && strings.Contains(l, "NOERROR") {
				logf("nodelocaldns: node-local-dns answered syncer Pod %s: %s", p.Name, strings.TrimSpace(l))
				return
			}
		}
	}
	t.Errorf("node-local-dns's log has no answer for %s to a syncer Pod:\n%s", apiServerName, tail(log, 20))
}

// waitSyncerQueriesDropped waits until kube-network-policies has dropped,
// since logFrom in its log, a query of a syncer Pod to node-local-dns: the
// caBundle stays empty because the syncer's resolver is cut off, not
// because it did not try. The syncer's own error need not name the lookup
// (a request whose deadline passes first reports only that), so the policy
// engine's verdicts are the witness. A query judged before the engine saw
// the edited policy may have been accepted; the log lists each verdict.
func waitSyncerQueriesDropped(t *testing.T, c *realnode.Cluster, logFrom int) {
	t.Helper()
	resolver := hostPort(stack.NodeLocalDNSAddress, 53)
	var judged map[string]string
	what := fmt.Sprintf("kube-network-policies to drop a query of a syncer Pod to %s after the wipe", resolver)
	err := poll.Until(t.Context(), what, func(context.Context) error {
		var ips []string
		for _, p := range runningPods(t, stack.SyncerName) {
			ips = append(ips, p.Status.PodIP)
		}
		judged = judgedPackets(c.NetworkPolicies.Log()[logFrom:], ips, resolver)
		if !slices.Contains(slices.Collect(maps.Values(judged)), "drop") {
			return fmt.Errorf("the syncer Pods %v, their queries judged: %v", ips, judged)
		}
		return nil
	}, poll.Timeout(3*time.Minute))
	for packet, verdict := range judged {
		logf("nodelocaldns: kube-network-policies judged a syncer query: %s: %q", packet, verdict)
	}
	if err != nil {
		t.Fatalf("%v; its log's tail:\n%s", err, tail(c.NetworkPolicies.Log(), 30))
	}
}

// podLog returns the log of Pod ns/name since since (all of it when zero),
// or "" when it cannot be read.
func podLog(t *testing.T, ns, name string, since time.Time) string {
	t.Helper()
	opts := &corev1.PodLogOptions{}
	if !since.IsZero() {
		opts.SinceTime = &metav1.Time{Time: since}
	}
	b, err := sys.Clientset().CoreV1().Pods(ns).GetLogs(name, opts).DoRaw(context.Background())
	if err != nil {
		return ""
	}
	return string(b)
}

// bundleEmpty reports whether every caBundle of the webhook configuration
// is empty.
func bundleEmpty(t *testing.T) bool {
	t.Helper()
	mwc, err := sys.Clientset().AdmissionregistrationV1().MutatingWebhookConfigurations().Get(context.Background(), stack.WebhookConfigName, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return !slices.ContainsFunc(mwc.Webhooks, func(w admissionregistrationv1.MutatingWebhook) bool { return len(w.ClientConfig.CABundle) > 0 })
}

// assertCheckSaysBundleEmpty runs check and holds it to naming the
// failure: ca-bundle fails on an empty caBundle, syncer-lease fails, and
// the report fails with exit code 2.
func assertCheckSaysBundleEmpty(t *testing.T, c checker) {
	t.Helper()
	run, r := c.report(t, nil, "--kubeconfig", sys.KubeconfigPath(), "-o", "json")
	logf("nodelocaldns: check with the DNS allow as before:\n%s", run.stdout)
	bundle := result(r, check.IDCABundle)
	if bundle.Status != check.StatusFail || !strings.Contains(bundle.Message, "caBundle is empty") {
		t.Errorf("%s = %s %q, want FAIL naming the empty caBundle", check.IDCABundle, bundle.Status, bundle.Message)
	}
	if lease := result(r, check.IDSyncerLease); lease.Status != check.StatusFail {
		t.Errorf("%s = %s %q, want FAIL", check.IDSyncerLease, lease.Status, lease.Message)
	}
	if r.Status != check.StatusFail || run.code != 2 {
		t.Errorf("check status %s, exit code %d; want FAIL, 2", r.Status, run.code)
	}
}

// waitCheckPasses waits until every item of check passes, and holds the
// report to it.
func waitCheckPasses(t *testing.T, c checker, when string) {
	t.Helper()
	args := []string{"--kubeconfig", sys.KubeconfigPath(), "-o", "json"}
	run, r, _ := c.waitReport(t, nil, 3*time.Minute, args, func(r check.Report) bool { return statusesAre(r, nil) })
	logf("nodelocaldns: check with %s:\n%s", when, run.stdout)
	assertReport(t, run, r, nil)
}

package e2e

import (
	"context"
	"fmt"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"

	"github.com/kyma-project/kim-snatch/test/e2e/stack"
	"github.com/kyma-project/kim-snatch/test/framework"
	"github.com/kyma-project/kim-snatch/test/framework/poll"
	"github.com/kyma-project/kim-snatch/test/process"
	"github.com/kyma-project/kim-snatch/test/realnode"
	"github.com/kyma-project/kim-snatch/test/tools"
)

// The shipped NetworkPolicies (deploy/webhook/networkpolicy.yaml and
// deploy/syncer/networkpolicy.yaml), enforced on the real node by
// kube-network-policies (test/realnode/netpol.go). Clients are probe Pods
// (hack/tools/imagetool/probe) on the node, in namespaces of the test's own.
const (
	probeImage   = "kim-snatch-probe:e2e"
	scraperLabel = "networking.kyma-project.io/metrics-scraping"
	webhookPort  = 9443
	metricsPort  = 8080
	healthPort   = 8081
	probeTimeout = 4 * time.Second
	// probeAfter is how long a probe waits before it connects. Without
	// NRI, which containerd 1.6 lacks, kube-network-policies learns a
	// Pod's address only from the Pod's status: a connection opened as
	// the container starts is judged as one from no Pod, and a policy
	// that should drop it lets it through.
	probeAfter      = 5 * time.Second
	probePodTimeout = 2 * time.Minute
)

// enforcingCluster returns the real node's cluster, with the probe image
// imported, or skips t: only the real node runs kube-network-policies and
// has the probe image.
func enforcingCluster(t *testing.T) *realnode.Cluster {
	t.Helper()
	ns, ok := sys.(*nodeSystem)
	if !ok {
		t.Skipf("%T: NetworkPolicies are enforced only on the real node; on another cluster the probe image is not there", sys)
	}
	c := ns.cluster
	if c.NetworkPolicies == nil {
		t.Skip("the real node was started with NoNetworkPolicies")
	}
	if err := c.NetworkPolicies.Healthy(); err != nil {
		t.Fatal(err)
	}
	probeImported.Do(func() {
		images, err := tools.Images.Find()
		if err != nil {
			probeImportErr = err
			return
		}
		archive := filepath.Join(images, "probe.tar")
		if probeImportErr = c.Node.ImportImage(archive); probeImportErr != nil {
			probeImportErr = fmt.Errorf("%w (make images writes %s)", probeImportErr, archive)
		}
	})
	if probeImportErr != nil {
		t.Fatal(probeImportErr)
	}
	return c
}

var (
	probeImported  sync.Once
	probeImportErr error
)

// probeResult is what a probe Pod printed and whether it exited 0.
type probeResult struct {
	pod, line string
	ok        bool
}

func (r probeResult) String() string { return r.pod + ": " + r.line }

// dropped reports whether the connection timed out, as one that a
// NetworkPolicy drops does, rather than being refused.
func (r probeResult) dropped() bool { return !r.ok && strings.Contains(r.line, "timeout") }

// probe runs a probe Pod with labels in ns on the real node, waits until it
// has exited and returns what it printed.
func probe(t *testing.T, ns, name string, labels map[string]string, args ...string) probeResult {
	t.Helper()
	ctx := context.Background()
	cs := sys.Clientset()
	createProbePod(ctx, t, cs, probePod(ns, name, labels, args))
	phase, message := waitProbeEnded(ctx, t, cs, ns, name)
	r := probeResult{pod: ns + "/" + name, line: strings.TrimSpace(message), ok: phase == corev1.PodSucceeded}
	if r.line == "" {
		t.Fatalf("probe Pod %s/%s ended %s without a termination message", ns, name, phase)
	}
	logf("netpol: %s", r)
	return r
}

// probePod is a probe Pod with labels in ns on the system node, which
// runs the probe with args once and writes its line as the termination
// message.
func probePod(ns, name string, labels map[string]string, args []string) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, Labels: labels},
		Spec: corev1.PodSpec{
			RestartPolicy:                corev1.RestartPolicyNever,
			AutomountServiceAccountToken: ptr.To(false),
			NodeSelector:                 map[string]string{realnode.SystemNodeLabel: "true"},
			Tolerations:                  []corev1.Toleration{{Key: realnode.SystemNodeLabel, Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule}},
			SecurityContext: &corev1.PodSecurityContext{
				RunAsNonRoot:   ptr.To(true),
				SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault},
			},
			Containers: []corev1.Container{{
				Name:            "probe",
				Image:           probeImage,
				ImagePullPolicy: corev1.PullNever,
				Args:            append([]string{"-after=" + probeAfter.String(), "-timeout=" + probeTimeout.String()}, args...),
				// The probe writes its line there too; a failure to do so
				// still leaves the line in the message.
				TerminationMessagePolicy: corev1.TerminationMessageFallbackToLogsOnError,
				SecurityContext: &corev1.SecurityContext{
					AllowPrivilegeEscalation: ptr.To(false),
					ReadOnlyRootFilesystem:   ptr.To(true),
					Capabilities:             &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}},
				},
			}},
		},
	}
}

// createProbePod creates pod.
func createProbePod(ctx context.Context, t *testing.T, cs kubernetes.Interface, pod *corev1.Pod) {
	t.Helper()
	// A namespace's default ServiceAccount, which admission wants, comes a
	// moment after the namespace.
	err := poll.Until(ctx, "probe Pod "+pod.Namespace+"/"+pod.Name+" created", func(ctx context.Context) error {
		_, err := cs.CoreV1().Pods(pod.Namespace).Create(ctx, pod, metav1.CreateOptions{})
		return err
	}, poll.Timeout(30*time.Second))
	if err != nil {
		t.Fatal(err)
	}
}

// waitProbeEnded waits until the probe Pod ns/name has ended, and returns
// its phase and termination message.
func waitProbeEnded(ctx context.Context, t *testing.T, cs kubernetes.Interface, ns, name string) (corev1.PodPhase, string) {
	t.Helper()
	var phase corev1.PodPhase
	var message string
	err := poll.Until(ctx, "probe Pod "+ns+"/"+name+" to finish", func(ctx context.Context) error {
		p, err := cs.CoreV1().Pods(ns).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		phase = p.Status.Phase
		for _, s := range p.Status.ContainerStatuses {
			if s.State.Terminated != nil {
				message = s.State.Terminated.Message
			}
		}
		if phase != corev1.PodSucceeded && phase != corev1.PodFailed {
			return fmt.Errorf("phase %q", phase)
		}
		return nil
	}, poll.Timeout(probePodTimeout))
	if err != nil {
		t.Fatal(err)
	}
	return phase, message
}

// hostProbe runs the probe on the host as uid 65534, a process that is not
// root and so is judged by kube-network-policies like a caller from
// another machine, and returns what it printed.
func hostProbe(t *testing.T, bin string, args ...string) probeResult {
	t.Helper()
	// A probe that fails is a result, not an error: the probe prints its
	// line on stdout, and setpriv and the probe their usage errors on
	// stderr.
	run, err := process.Command{}.Run(context.Background(), "setpriv", append([]string{"--reuid=65534", "--regid=65534", "--clear-groups", bin, "-timeout=" + probeTimeout.String()}, args...)...)
	r := probeResult{pod: "host process as 65534", line: strings.TrimSpace(run.Stdout + run.Stderr), ok: err == nil}
	logf("netpol: %s", r)
	return r
}

// systemPod returns a running Pod of the named Deployment in kyma-system.
func systemPod(t *testing.T, app string) corev1.Pod {
	t.Helper()
	for _, p := range runningPods(t, app) {
		if p.Status.PodIP != "" {
			return p
		}
	}
	t.Fatalf("no running %s Pod with an address in %s", app, stack.Namespace)
	return corev1.Pod{}
}

// verdicts returns kube-network-policies' packet counts by verdict.
func verdicts(t *testing.T, c *realnode.Cluster) map[string]float64 {
	t.Helper()
	v, err := c.NetworkPolicies.Verdicts(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// logVerdicts logs how many packets were accepted and dropped since before.
func logVerdicts(t *testing.T, c *realnode.Cluster, before map[string]float64) map[string]float64 {
	t.Helper()
	after := verdicts(t, c)
	delta := map[string]float64{}
	for k, v := range after {
		delta[k] = v - before[k]
	}
	t.Logf("kube-network-policies verdicts during the test: %v (in total: %v)", delta, after)
	return delta
}

func hostPort(ip string, port int) string { return net.JoinHostPort(ip, strconv.Itoa(port)) }

// The webhook port is open to every source: the API server's admission
// calls must pass wherever it runs. Here it is a root process on the host,
// whose connections pass anyway (as the kubelet's do on a node), so the
// port is also dialled from a Pod that no policy names and from a host
// process that is not root.
func TestNetworkPolicyOpensTheWebhookPortToAll(t *testing.T) {
	framework.InTier(t, framework.Full, "the policies one rule at a time; the smoke installs under them")
	framework.Alone(t, "it counts kube-network-policies' verdicts, which other tests' traffic would change")
	c := enforcingCluster(t)
	before := verdicts(t, c)
	webhook := systemPod(t, stack.WebhookName)
	target := hostPort(webhook.Status.PodIP, webhookPort)

	kyma := namespace(t, "netpol-kyma", true)
	pods := runDeployment(t, kyma, deployment("netpol", 1, "10m"), 1)
	if n := poolTerms(&pods[0]); n == 0 {
		t.Errorf("a Kyma Pod created with the policies enforced has no pool term: the API server did not reach the webhook")
	}

	other := namespace(t, "netpol-client", false)
	if r := probe(t, other, "webhook-tls", nil, "tls", target); !r.ok {
		t.Errorf("a Pod in another namespace, with no label, could not complete TLS with the webhook at %s: %s", target, r)
	}

	if r := hostProbe(t, hostProbeBinary(t), "tls", target); !r.ok {
		t.Errorf("a host process as uid 65534 could not complete TLS with the webhook at %s: %s", target, r)
	}
	if d := logVerdicts(t, c, before); d["accept"] < 2 {
		t.Errorf("kube-network-policies accepted %v packets, want at least the two connections to the webhook port", d["accept"])
	}
}

// Metrics are open only to Pods labelled as scrapers, in any namespace, as
// both policies say; every other port of both Pods is closed.
func TestNetworkPolicyOpensMetricsOnlyToScrapers(t *testing.T) {
	framework.InTier(t, framework.Full, "the policies one rule at a time; the smoke installs under them")
	framework.Alone(t, "it counts kube-network-policies' verdicts, which other tests' traffic would change")
	c := enforcingCluster(t)
	before := verdicts(t, c)
	webhook := systemPod(t, stack.WebhookName)
	syncer := systemPod(t, stack.SyncerName)
	other := namespace(t, "netpol-scrape", false)
	scraper := map[string]string{scraperLabel: "allowed"}

	cases := []struct {
		name, ns string
		labels   map[string]string
		args     []string
		open     bool
	}{
		{"webhook-scraper", other, scraper, []string{"http", "http://" + hostPort(webhook.Status.PodIP, metricsPort) + "/metrics"}, true},
		// The syncer's /metrics is HTTPS and checks each scrape itself: an
		// HTTP status at all proves the connection passed.
		{"syncer-scraper", other, scraper, []string{"http", "https://" + hostPort(syncer.Status.PodIP, metricsPort) + "/metrics"}, true},
		{"webhook-unlabelled", other, nil, []string{"tcp", hostPort(webhook.Status.PodIP, metricsPort)}, false},
		{"syncer-unlabelled", other, nil, []string{"tcp", hostPort(syncer.Status.PodIP, metricsPort)}, false},
		{"webhook-same-ns-unlabelled", stack.Namespace, nil, []string{"tcp", hostPort(webhook.Status.PodIP, metricsPort)}, false},
		{"webhook-health-scraper", other, scraper, []string{"tcp", hostPort(webhook.Status.PodIP, healthPort)}, false},
		{"syncer-health-scraper", other, scraper, []string{"tcp", hostPort(syncer.Status.PodIP, healthPort)}, false},
	}
	for _, tc := range cases {
		name := "netpol-" + tc.name
		r := probe(t, tc.ns, name, tc.labels, tc.args...)
		if tc.ns == stack.Namespace {
			t.Cleanup(func() {
				_ = sys.Clientset().CoreV1().Pods(stack.Namespace).Delete(context.Background(), name, metav1.DeleteOptions{})
			})
		}
		switch {
		case tc.open && !r.ok:
			t.Errorf("%s: want the connection let through: %s", tc.name, r)
		case tc.open && !strings.Contains(r.line, "HTTP "):
			t.Errorf("%s: want an HTTP response: %s", tc.name, r)
		case !tc.open && !r.dropped():
			t.Errorf("%s: want the connection dropped (a timeout): %s", tc.name, r)
		}
	}
	if d := logVerdicts(t, c, before); d["drop"] < 5 {
		t.Errorf("kube-network-policies dropped %v packets, want at least one for each of the five closed connections", d["drop"])
	}
}

// The syncer reaches the API server under Kyma's deny-all, through the
// shipped allow: new syncer Pods take the Lease and renew it, and
// kube-network-policies judged its Pods' connections to the API server and
// accepted them. The same allow beside a deny-all, in a namespace of the
// test, lets a probe Pod with the syncer's label reach the API server
// through the kubernetes Service, while the deny-all drops the same
// connection from a Pod with another label: enforcement is real.
func TestNetworkPolicyLetsTheSyncerReachTheAPIServer(t *testing.T) {
	framework.InTier(t, framework.Full, "the policies one rule at a time; the smoke installs under them")
	framework.Alone(t, "it counts kube-network-policies' verdicts, which other tests' traffic would change")
	c := enforcingCluster(t)
	ctx := context.Background()
	cs := sys.Clientset()
	before := verdicts(t, c)
	// Restarted syncer processes, each of whose connections is judged
	// from here on, as its Pod's.
	logFrom := len(c.NetworkPolicies.Log())
	restartSyncersAndAwaitLeader(ctx, t, cs)
	assertSyncerConnectionsAccepted(ctx, t, c, cs, logFrom)
	assertAllowToAPIServerAllowsTheSyncer(ctx, t, c, cs)
	if d := logVerdicts(t, c, before); d["drop"] < 1 || d["accept"] < 1 {
		t.Errorf("want kube-network-policies to have accepted and dropped packets, have %v", d)
	}
}

// restartSyncersAndAwaitLeader restarts the syncer containers and waits
// until a restarted process holds and renews the Lease.
func restartSyncersAndAwaitLeader(ctx context.Context, t *testing.T, cs kubernetes.Interface) {
	t.Helper()
	lease, err := cs.CoordinationV1().Leases(stack.Namespace).Get(ctx, stack.LeaseName, metav1.GetOptions{})
	if err != nil || lease.Spec.HolderIdentity == nil {
		t.Fatalf("lease %s/%s has no holder: %v", stack.Namespace, stack.LeaseName, err)
	}
	holderBefore := *lease.Spec.HolderIdentity
	restarted := time.Now()
	restartSyncerContainers(t)
	what := fmt.Sprintf("a restarted syncer process to hold and renew Lease %s/%s", stack.Namespace, stack.LeaseName)
	err = poll.Until(ctx, what, func(ctx context.Context) error {
		l, err := cs.CoordinationV1().Leases(stack.Namespace).Get(ctx, stack.LeaseName, metav1.GetOptions{})
		if err != nil {
			return err
		}
		h := l.Spec.HolderIdentity
		if h == nil || *h == holderBefore || l.Spec.RenewTime == nil || !l.Spec.RenewTime.After(restarted) {
			return fmt.Errorf("holder %q, before %q; renewed at %v", ptr.Deref(h, ""), holderBefore, l.Spec.RenewTime)
		}
		return nil
	}, poll.Timeout(2*time.Minute))
	if err != nil {
		t.Error(err)
	}
}

// assertSyncerConnectionsAccepted holds the syncer Pods' connections to the
// API server that kube-network-policies judged since logFrom: each was
// accepted, and judged as a syncer Pod's.
func assertSyncerConnectionsAccepted(ctx context.Context, t *testing.T, c *realnode.Cluster, cs kubernetes.Interface, logFrom int) {
	t.Helper()
	apiPort := apiServerPort(t, c)
	list, err := cs.CoreV1().Pods(stack.Namespace).List(ctx, metav1.ListOptions{LabelSelector: "app.kubernetes.io/name=" + stack.SyncerName})
	if err != nil {
		t.Fatal(err)
	}
	var syncerIPs []string
	for _, p := range list.Items {
		syncerIPs = append(syncerIPs, p.Status.PodIP)
	}
	// The syncer connects as its container starts, so these packets may
	// show srcPod="none": they prove that its connections pass the queue
	// and are accepted, and the probe under its policy shows what the
	// policy allows.
	judged := judgedPackets(c.NetworkPolicies.Log()[logFrom:], syncerIPs, hostPort(realnode.NodeIP, apiPort))
	for line, verdict := range judged {
		t.Logf("kube-network-policies judged a syncer connection to the API server: %s: %q", line, verdict)
		if verdict != "accept" {
			t.Errorf("a syncer Pod's connection to the API server got the verdict %q, want accept: %s", verdict, line)
		}
	}
	asPod := 0
	for line := range judged {
		if strings.Contains(line, `srcPod="`+stack.Namespace+"/"+stack.SyncerName+"-") {
			asPod++
		}
	}
	if asPod == 0 && len(judged) > 0 {
		t.Errorf("kube-network-policies judged no connection to the API server as a syncer Pod's, so no policy was applied to them")
	}
	if len(judged) == 0 {
		t.Errorf("kube-network-policies judged no connection of a syncer Pod to the API server (%s:%d); log tail:\n%s", realnode.NodeIP, apiPort, tail(c.NetworkPolicies.Log(), 30))
	}
}

// assertAllowToAPIServerAllowsTheSyncer copies the shipped policy beside a
// deny-all into a namespace of its own: a Pod labelled as the syncer
// reaches the API server, another Pod is dropped.
func assertAllowToAPIServerAllowsTheSyncer(ctx context.Context, t *testing.T, c *realnode.Cluster, cs kubernetes.Interface) {
	t.Helper()
	shipped, err := cs.NetworkingV1().NetworkPolicies(stack.Namespace).Get(ctx, allowToAPIServer, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	ns := namespace(t, "netpol-egress", false)
	copied := &networkingv1.NetworkPolicy{ObjectMeta: metav1.ObjectMeta{Name: shipped.Name, Namespace: ns}, Spec: shipped.Spec}
	denied := &networkingv1.NetworkPolicy{
		ObjectMeta: metav1.ObjectMeta{Name: denyAll, Namespace: ns},
		Spec: networkingv1.NetworkPolicySpec{
			PolicyTypes: []networkingv1.PolicyType{networkingv1.PolicyTypeIngress, networkingv1.PolicyTypeEgress},
		},
	}
	for _, np := range []*networkingv1.NetworkPolicy{copied, denied} {
		if _, err := cs.NetworkingV1().NetworkPolicies(ns).Create(ctx, np, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	apiService := hostPort(firstServiceIP(t), 443)
	if r := probe(t, ns, "as-syncer", map[string]string{"app.kubernetes.io/name": stack.SyncerName}, "tls", apiService); !r.ok {
		t.Errorf("a Pod under the deny-all and the syncer's allow could not reach the API server at %s: %s", apiService, r)
	}
	if r := probe(t, ns, "no-egress", map[string]string{"app.kubernetes.io/name": "no-egress"}, "tls", apiService); !r.dropped() {
		t.Errorf("a Pod under the deny-all alone was not dropped on its way to the API server at %s: %s", apiService, r)
	}
	if !strings.Contains(c.NetworkPolicies.Log(), `"Evaluating packet" srcPod="`+ns+`/no-egress"`) {
		t.Errorf("kube-network-policies did not judge a packet of %s/no-egress as that Pod's", ns)
	}
}

// judgedPackets returns, for each packet from one of srcIPs to dst
// (host:port) that kube-network-policies judged in log, the packet and its
// verdict ("accept" or "drop"). With --v=2 it logs "Evaluating packet"
// with both Pods, the packet on the next line as "[id] src:port dst:port
// proto", and "Finished syncing packet" with its id and verdict. A process
// that connects as its container starts may show srcPod="none" (see
// probeAfter).
func judgedPackets(log string, srcIPs []string, dst string) map[string]string {
	lines := strings.Split(log, "\n")
	judged := map[string]string{} // packet id -> packet
	verdict := map[string]string{}
	for i, l := range lines {
		if strings.Contains(l, `"Evaluating packet"`) && i+1 < len(lines) {
			m := evaluatedPacket.FindStringSubmatch(lines[i+1])
			if m != nil && m[3] == dst && slices.Contains(srcIPs, m[2]) {
				judged[m[1]] = strings.TrimSpace(l[strings.Index(l, `"Evaluating`):]) + " " + strings.TrimSpace(lines[i+1])
			}
		}
		if m := finishedPacket.FindStringSubmatch(l); m != nil {
			verdict[m[1]] = m[2]
		}
	}
	out := map[string]string{}
	for id, p := range judged {
		out[p] = verdict[id]
	}
	return out
}

var (
	evaluatedPacket = regexp.MustCompile(`^\s*\[(\d+)\] (\S+):\d+ (\S+) `)
	finishedPacket  = regexp.MustCompile(`"Finished syncing packet" id=(\d+) .*verdict="(\w+)"`)
)

func apiServerPort(t *testing.T, c *realnode.Cluster) int {
	t.Helper()
	u, err := url.Parse(c.Config.Host)
	if err != nil {
		t.Fatal(err)
	}
	p, err := strconv.Atoi(u.Port())
	if err != nil {
		t.Fatalf("API server port in %q: %v", c.Config.Host, err)
	}
	return p
}

// firstServiceIP is the kubernetes Service's ClusterIP.
func firstServiceIP(t *testing.T) string {
	t.Helper()
	svc, err := sys.Clientset().CoreV1().Services(metav1.NamespaceDefault).Get(context.Background(), "kubernetes", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return svc.Spec.ClusterIP
}

// hostProbeBinary returns the probe of the image kim-snatch-probe, the
// binary that make images built and packed (bin/images/build/probe), in a
// copy for the host.
func hostProbeBinary(t *testing.T) string {
	t.Helper()
	src := filepath.Join(tools.Images.Path(t), "build", "probe")
	data, err := os.ReadFile(src)
	if err != nil {
		t.Fatalf("the probe of make images: %v", err)
	}
	// Not in t.TempDir, whose parent only root may enter: the probe runs
	// as another uid.
	dir, err := os.MkdirTemp("", "kim-snatch-probe-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(dir) })
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(dir, "probe")
	if err := os.WriteFile(bin, data, 0o755); err != nil {
		t.Fatal(err)
	}
	return bin
}

func tail(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	return strings.Join(lines[max(0, len(lines)-n):], "\n")
}

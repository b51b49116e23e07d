package realnode

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"

	"github.com/kyma-project/kim-snatch/test/framework/poll"
	"github.com/kyma-project/kim-snatch/test/process"
	"github.com/kyma-project/kim-snatch/test/tools"
)

// NetworkPolicies are enforced on the node by kube-network-policies
// (sigs.k8s.io/kube-network-policies v0.8.0, built unmodified by make from
// hack/tools/netpol), SIG Network's reference implementation: the first
// packet of each connection goes to it through an NFQUEUE, and it accepts
// or drops it by the NetworkPolicies of the Pods at either end.
//
// It runs on the host as it would run in a DaemonSet: it takes its API
// access only from the in-cluster configuration, so it runs in a mount
// namespace of its own in which a folder with a ServiceAccount token and
// the API server's CA is mounted at the usual place.
const (
	// NetpolServiceAccount is its ServiceAccount and ClusterRole, in
	// kube-system, as in upstream's install.yaml.
	NetpolServiceAccount = "kube-network-policies"
	// NetpolMetricsPort is where it serves /metrics on NodeIP.
	NetpolMetricsPort = 9080

	netpolQueue = 100
	// netpolTable is the nft table the controller creates, where a kernel
	// lets it (see queueChains).
	netpolTable = "kube-network-policies"
	// netpolRoot is where the in-cluster configuration is read.
	netpolRoot = "/var/run/secrets/kubernetes.io/serviceaccount"
)

// queueChains send new connections to the controller's queue. The
// controller's own nft rules do this with the nft queue expression, which
// a kernel built without CONFIG_NFT_QUEUE lacks: there they fail to load
// with "Could not process rule: No such file or directory", and it says so
// on every sync. The iptables NFQUEUE target (through nft_compat) reaches
// the same queue, so these chains, in mangle, do what its rules do. Where
// its rules do load, a packet is judged twice, with the same verdict. Like
// them they let established connections and root's own sockets through
// (its `meta skuid 0`): the kubelet's probes and the API server's calls to
// webhooks run as root here, as on a node. They queue all Pod traffic, not
// only that of Pods a policy selects; the controller accepts the rest.
//
// The INPUT chain has no counterpart upstream, whose rules hook
// postrouting alone: there the API server is on another machine, and a
// Pod's connection to it is forwarded. Here it is on this host, and a
// connection to a local address never reaches postrouting, so without the
// INPUT chain a Pod's egress to the API server would be let through
// whatever its policy says.
var queueChains = []struct {
	name, from string
	rules      [][]string
}{
	{"KSN-NETPOL", "POSTROUTING", [][]string{
		{"-m", "conntrack", "--ctstate", "ESTABLISHED,RELATED", "-j", "RETURN"},
		{"-p", "icmp", "-j", "RETURN"},
		{"-m", "owner", "--uid-owner", "0", "-j", "RETURN"},
		{"-s", PodCIDR, "-j", "NFQUEUE", "--queue-num", strconv.Itoa(netpolQueue)},
		{"-d", PodCIDR, "-j", "NFQUEUE", "--queue-num", strconv.Itoa(netpolQueue)},
	}},
	{"KSN-NETPOL-INPUT", "INPUT", [][]string{
		{"-m", "conntrack", "--ctstate", "ESTABLISHED,RELATED", "-j", "RETURN"},
		{"-p", "icmp", "-j", "RETURN"},
		{"-s", PodCIDR, "-j", "NFQUEUE", "--queue-num", strconv.Itoa(netpolQueue)},
	}},
}

// NetworkPolicies is the running kube-network-policies.
type NetworkPolicies struct {
	proc *process.Process
	// MetricsURL is its /metrics.
	MetricsURL string
}

// startNetworkPolicies grants kube-network-policies (tools.NetworkPolicies)
// its API access, queues new connections to it and starts it. It returns
// once it listens on the queue.
func (n *Node) startNetworkPolicies(ctx context.Context, cs kubernetes.Interface, cfg *rest.Config) (*NetworkPolicies, error) {
	bin, err := tools.NetworkPolicies.Find()
	if err != nil {
		return nil, err
	}
	sa, err := n.writeNetpolServiceAccount(ctx, cs, cfg)
	if err != nil {
		return nil, err
	}
	u, err := url.Parse(cfg.Host)
	if err != nil {
		return nil, fmt.Errorf("API server address %q: %w", cfg.Host, err)
	}
	// Started through a link in the state folder, it is found and killed
	// by Clean after a killed run, as the other components are. Prepare
	// left the folder new, without the link.
	link := filepath.Join(n.dir, "netpol", "kube-network-policies")
	if err := os.Symlink(bin, link); err != nil {
		return nil, err
	}
	n.progress("queueing new Pod connections to kube-network-policies (NFQUEUE %d)", netpolQueue)
	if err := addQueueChains(); err != nil {
		return nil, err
	}
	n.progress("starting kube-network-policies")
	p, err := n.runNetworkPolicies(sa, link, u.Port())
	if err != nil {
		return nil, err
	}
	np := &NetworkPolicies{proc: p, MetricsURL: fmt.Sprintf("http://%s/metrics", net.JoinHostPort(NodeIP, strconv.Itoa(NetpolMetricsPort)))}
	what := fmt.Sprintf("kube-network-policies to listen on queue %d", netpolQueue)
	err = poll.Until(ctx, what, whileHealthy(np.Healthy, func(context.Context) error {
		if !queueBound(netpolQueue) {
			return fmt.Errorf("nothing listens on queue %d", netpolQueue)
		}
		return nil
	}), poll.Timeout(2*time.Minute))
	if err != nil {
		np.Stop()
		return nil, err
	}
	return np, nil
}

// writeNetpolServiceAccount grants kube-network-policies its API access and
// writes its in-cluster configuration (token, CA, namespace) into a folder
// of the node's state, whose path it returns.
func (n *Node) writeNetpolServiceAccount(ctx context.Context, cs kubernetes.Interface, cfg *rest.Config) (string, error) {
	sa := filepath.Join(n.dir, "netpol", "serviceaccount")
	if err := os.MkdirAll(sa, 0o700); err != nil {
		return "", err
	}
	token, err := grantNetworkPolicies(ctx, cs)
	if err != nil {
		return "", err
	}
	ca := cfg.CAData
	if len(ca) == 0 {
		if ca, err = os.ReadFile(cfg.CAFile); err != nil {
			return "", fmt.Errorf("read the API server's CA: %w", err)
		}
	}
	for name, data := range map[string][]byte{"token": []byte(token), "ca.crt": ca, "namespace": []byte(metav1.NamespaceSystem)} {
		if err := os.WriteFile(filepath.Join(sa, name), data, 0o600); err != nil {
			return "", err
		}
	}
	return sa, nil
}

// runNetworkPolicies starts the binary at link in a mount namespace of its
// own where sa is mounted at netpolRoot, with the API server at
// NodeIP:apiPort.
func (n *Node) runNetworkPolicies(sa, link, apiPort string) (*process.Process, error) {
	// A tmpfs on /run, private to its mount namespace, holds the mount
	// point: /var/run/secrets does not exist on the host, and is not
	// created there.
	const script = `set -e
mount -t tmpfs -o mode=0755,size=1m kube-network-policies /run
mkdir -p ` + netpolRoot + `
mount --bind "$0" ` + netpolRoot + `
exec "$@"`
	return process.Start(process.Options{
		Name: "kube-network-policies",
		Path: "unshare",
		Args: []string{"--mount", "--propagation", "private", "sh", "-c", script, sa, link,
			"--hostname-override=" + SystemNodeName,
			"--nfqueue-id=" + strconv.Itoa(netpolQueue),
			"--metrics-bind-address=" + net.JoinHostPort(NodeIP, strconv.Itoa(NetpolMetricsPort)),
			// The race it works around is fixed in kernels from 6.12 on.
			"--netfilter-bug-1766-fix=false",
			// Every verdict, with the Pods at both ends, for the tests.
			"--v=2",
		},
		Env:     []string{"KUBERNETES_SERVICE_HOST=" + NodeIP, "KUBERNETES_SERVICE_PORT=" + apiPort},
		LogPath: filepath.Join(n.dir, "kube-network-policies.log"),
	})
}

// grantNetworkPolicies creates the ServiceAccount and its ClusterRole,
// with the verbs of upstream's install.yaml, and returns a token for it.
// The controller also starts an event broadcaster but records no event.
func grantNetworkPolicies(ctx context.Context, cs kubernetes.Interface) (string, error) {
	meta := metav1.ObjectMeta{Name: NetpolServiceAccount, Namespace: metav1.NamespaceSystem}
	role := &rbacv1.ClusterRole{
		ObjectMeta: metav1.ObjectMeta{Name: NetpolServiceAccount},
		Rules: []rbacv1.PolicyRule{
			{APIGroups: []string{""}, Resources: []string{"pods", "namespaces"}, Verbs: []string{"list", "watch"}},
			{APIGroups: []string{"networking.k8s.io"}, Resources: []string{"networkpolicies"}, Verbs: []string{"list", "watch"}},
		},
	}
	binding := &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: NetpolServiceAccount},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: NetpolServiceAccount},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: NetpolServiceAccount, Namespace: metav1.NamespaceSystem}},
	}
	_, errSA := cs.CoreV1().ServiceAccounts(meta.Namespace).Create(ctx, &corev1.ServiceAccount{ObjectMeta: meta}, metav1.CreateOptions{})
	_, errRole := cs.RbacV1().ClusterRoles().Create(ctx, role, metav1.CreateOptions{})
	_, errBinding := cs.RbacV1().ClusterRoleBindings().Create(ctx, binding, metav1.CreateOptions{})
	for _, err := range []error{errSA, errRole, errBinding} {
		if err != nil && !apierrors.IsAlreadyExists(err) {
			return "", fmt.Errorf("grant kube-network-policies its API access: %w", err)
		}
	}
	tr, err := cs.CoreV1().ServiceAccounts(meta.Namespace).CreateToken(ctx, meta.Name, &authenticationv1.TokenRequest{
		Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: ptr.To[int64](24 * 3600)},
	}, metav1.CreateOptions{})
	if err != nil {
		return "", fmt.Errorf("request a token for kube-network-policies: %w", err)
	}
	return tr.Status.Token, nil
}

// Healthy returns an error if kube-network-policies has exited.
func (np *NetworkPolicies) Healthy() error { return exited(np.proc) }

// Log returns what kube-network-policies logged so far: with --v=2 every
// packet it judged, its Pods and its verdict.
func (np *NetworkPolicies) Log() string { return np.proc.Log() }

// Verdicts returns the number of packets it accepted and dropped, by
// verdict, from its packet_count metric.
func (np *NetworkPolicies) Verdicts(ctx context.Context) (map[string]float64, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, np.MetricsURL, nil)
	if err != nil {
		return nil, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, fmt.Errorf("scrape kube-network-policies: %w", err)
	}
	defer func() { _ = resp.Body.Close() }()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("scrape kube-network-policies: %s", resp.Status)
	}
	return verdicts(resp.Body)
}

// verdicts sums kube_network_policies_packet_count by its verdict label.
func verdicts(r io.Reader) (map[string]float64, error) {
	p := expfmt.NewTextParser(model.UTF8Validation)
	families, err := p.TextToMetricFamilies(r)
	if err != nil {
		return nil, err
	}
	out := map[string]float64{}
	for _, m := range families["kube_network_policies_packet_count"].GetMetric() {
		for _, l := range m.GetLabel() {
			if l.GetName() == "verdict" {
				out[l.GetValue()] += m.GetCounter().GetValue()
			}
		}
	}
	return out, nil
}

// Stop stops kube-network-policies with SIGINT, the one signal on which it
// removes its nft table, and kills it if it has not exited within 15s.
func (np *NetworkPolicies) Stop() {
	if err := np.proc.Signal(syscall.SIGINT); err == nil {
		if _, err := np.proc.Wait(15 * time.Second); err == nil {
			return
		}
	}
	np.proc.Stop(time.Second)
}

// addQueueChains creates queueChains and jumps to them.
func addQueueChains() error {
	for _, c := range queueChains {
		if _, err := run("iptables", "-w", "-t", "mangle", "-N", c.name); err != nil {
			return err
		}
		for _, r := range c.rules {
			if _, err := run(append([]string{"iptables", "-w", "-t", "mangle", "-A", c.name}, r...)...); err != nil {
				return err
			}
		}
		if _, err := run("iptables", "-w", "-t", "mangle", "-A", c.from, "-j", c.name); err != nil {
			return err
		}
	}
	return nil
}

// removeNetworkPolicyRules removes queueChains and the controller's nft
// table. Each may be absent; an error only says so.
func removeNetworkPolicyRules() {
	for _, c := range queueChains {
		_, _ = run("iptables", "-w", "-t", "mangle", "-D", c.from, "-j", c.name)
		_, _ = run("iptables", "-w", "-t", "mangle", "-F", c.name)
		_, _ = run("iptables", "-w", "-t", "mangle", "-X", c.name)
	}
	_, _ = run("nft", "delete", "table", "inet", netpolTable)
}

// queueBound reports whether a process listens on queue id, from the
// kernel's list of bound queues.
func queueBound(id int) bool {
	b, err := os.ReadFile("/proc/net/netfilter/nfnetlink_queue")
	if err != nil {
		return false
	}
	return slices.ContainsFunc(nonEmpty(string(b)), func(l string) bool {
		f := strings.Fields(l)
		return len(f) > 0 && f[0] == strconv.Itoa(id)
	})
}

package e2e

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/transport"
	"k8s.io/utils/ptr"

	"github.com/kyma-project/kim-snatch/pkg/syncer"
	"github.com/kyma-project/kim-snatch/test/e2e/stack"
	"github.com/kyma-project/kim-snatch/test/framework/poll"
	"github.com/kyma-project/kim-snatch/test/realnode"
)

// nodeSystem is the shipped installation on a real node: Gardener
// cert-management, then deploy/ applied through test/e2e/overlay with
// kubectl, as on kind.
type nodeSystem struct {
	*clusterSystem
	cluster *realnode.Cluster
	// scrape holds each binary's scrape client.
	scrape map[string]*http.Client
	// alerts receives what Alertmanager sends.
	alerts *stack.AlertReceiver
}

// requireNode skips t, saying why, unless the system under test is the
// real node, whose processes are on this host.
func requireNode(t *testing.T, why string) {
	t.Helper()
	if _, ok := sys.(*nodeSystem); !ok {
		t.Skipf("%T: %s", sys, why)
	}
}

func newNodeSystem(ctx context.Context) (system, error) {
	cluster, err := realnode.StartCluster(ctx, realnode.ClusterOptions{
		Images:    slices.Concat([]string{"snatch-webhook.tar", "cabundle-syncer.tar"}, stack.NeighbourImages, stack.MonitoringImages),
		KymaNodes: 2, CustomerNodes: 2,
		Progress: func(format string, args ...any) { logf("node: "+format, args...) },
	})
	if err != nil {
		return nil, err
	}
	s := &nodeSystem{cluster: cluster}
	logf("node: installing the neighbours: CoreDNS, the CRDs, Gardener cert-management, the Prometheus stack")
	if s.alerts, err = stack.StartAlertReceiver(); err != nil {
		return nil, errors.Join(err, s.Stop())
	}
	if err := stack.InstallNeighbours(ctx, cluster.KubeconfigPath); err != nil {
		return nil, errors.Join(err, s.Stop())
	}
	if err := stack.InstallMonitoring(ctx, cluster.KubeconfigPath); err != nil {
		return nil, errors.Join(err, s.Stop())
	}
	logf("node: applying deploy/ through test/e2e/overlay")
	if err := cluster.Apply(ctx, "test/e2e/overlay"); err != nil {
		return nil, errors.Join(err, s.Stop())
	}
	sys, err := newClusterSystem(ctx, cluster.KubeconfigPath)
	if err != nil {
		return nil, errors.Join(err, s.Stop())
	}
	s.clusterSystem = sys.(*clusterSystem)
	if s.scrape, err = scrapeClients(ctx, s.cs); err != nil {
		return nil, errors.Join(err, s.Stop())
	}
	return s, nil
}

// Stop stops the cluster and fails if the host is not as the node found
// it.
func (s *nodeSystem) Stop() error { return errors.Join(s.alerts.Stop(), s.cluster.Stop()) }

// scraper is the identity the suite scrapes the syncer with, bound as
// deploy/syncer/rbac.yaml tells operators to bind their Prometheus.
const (
	scraperNamespace = "e2e-monitoring"
	scraperName      = "prometheus"
	metricsReader    = "cabundle-syncer-metrics-reader"
)

// scrapeClients returns the clients that read each binary's metrics as its
// ServiceMonitor does: the webhook's over plain HTTP, the syncer's over
// HTTPS with the token of a ServiceAccount bound to the metrics reader
// role. The syncer serves a self-signed certificate, which the
// ServiceMonitor does not verify either.
func scrapeClients(ctx context.Context, cs kubernetes.Interface) (map[string]*http.Client, error) {
	if err := stack.CreateNamespace(ctx, cs, scraperNamespace, false); err != nil {
		return nil, err
	}
	sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: scraperName, Namespace: scraperNamespace}}
	if _, err := cs.CoreV1().ServiceAccounts(scraperNamespace).Create(ctx, sa, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return nil, err
	}
	binding := &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: "e2e-prometheus-cabundle-syncer-metrics"},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: metricsReader},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: scraperName, Namespace: scraperNamespace}},
	}
	if _, err := cs.RbacV1().ClusterRoleBindings().Create(ctx, binding, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return nil, err
	}
	tr, err := cs.CoreV1().ServiceAccounts(scraperNamespace).CreateToken(ctx, scraperName,
		&authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: ptr.To[int64](4 * 3600)}}, metav1.CreateOptions{})
	if err != nil {
		return nil, err
	}
	tlsClient := &http.Client{Transport: transport.NewBearerAuthRoundTripper(tr.Status.Token, &http.Transport{
		TLSClientConfig: &tls.Config{InsecureSkipVerify: true, MinVersion: tls.VersionTLS12}, //nolint:gosec // as the ServiceMonitor scrapes
	})}
	return map[string]*http.Client{stack.WebhookName: http.DefaultClient, stack.SyncerName: tlsClient}, nil
}

// Leader returns the syncer replica that holds the Lease.
func (s *nodeSystem) Leader(ctx context.Context) (replica, error) {
	var holder string
	what := fmt.Sprintf("a running syncer Pod to hold Lease %s/%s", stack.Namespace, stack.LeaseName)
	err := poll.Until(ctx, what, func(ctx context.Context) error {
		lease, err := s.cs.CoordinationV1().Leases(stack.Namespace).Get(ctx, stack.LeaseName, metav1.GetOptions{})
		if err != nil {
			return err
		}
		if lease.Spec.HolderIdentity == nil || *lease.Spec.HolderIdentity == "" {
			return errors.New("the Lease has no holder")
		}
		holder = syncer.HolderPodName(*lease.Spec.HolderIdentity)
		p, err := s.cs.CoreV1().Pods(stack.Namespace).Get(ctx, holder, metav1.GetOptions{})
		if err != nil {
			return err
		}
		if p.Status.PodIP == "" {
			return fmt.Errorf("holder %s has no Pod IP: %s", holder, podState(p))
		}
		return nil
	}, poll.Timeout(leaderTimeout))
	if err != nil {
		return replica{}, err
	}
	p, err := s.cs.CoreV1().Pods(stack.Namespace).Get(ctx, holder, metav1.GetOptions{})
	if err != nil {
		return replica{}, err
	}
	return s.replica(*p, stack.SyncerName), nil
}

func (s *nodeSystem) replica(p corev1.Pod, app string) replica {
	scheme := "http"
	if app == stack.SyncerName {
		scheme = "https"
	}
	name := p.Name
	return replica{
		Name: name, App: app,
		metricsURL: scheme + "://" + net.JoinHostPort(p.Status.PodIP, strconv.Itoa(metricsPort)) + "/metrics",
		client:     s.scrape[app],
		logTail: func(n int) string {
			b, err := s.cs.CoreV1().Pods(stack.Namespace).GetLogs(name, &corev1.PodLogOptions{TailLines: ptr.To(int64(n))}).DoRaw(context.Background())
			if err != nil {
				return fmt.Sprintf("(log of %s: %v)", name, err)
			}
			return string(b)
		},
	}
}

// KillSyncerLeader SIGKILLs the process of the leader's container, as an
// out-of-memory kill or a crash would: the kubelet restarts the container
// in the same Pod, and the Lease is not released.
func (s *nodeSystem) KillSyncerLeader(ctx context.Context) error {
	leader, err := s.Leader(ctx)
	if err != nil {
		return err
	}
	pod, err := s.cs.CoreV1().Pods(stack.Namespace).Get(ctx, leader.Name, metav1.GetOptions{})
	if err != nil {
		return err
	}
	pids := containerProcesses("/"+stack.SyncerName, pod.UID)
	if len(pids) != 1 {
		return fmt.Errorf("want one /%s process in Pod %s, found %v", stack.SyncerName, pod.Name, pids)
	}
	logf("killing the leader %s: SIGKILL to pid %d on the node", pod.Name, pids[0])
	return syscall.Kill(pids[0], syscall.SIGKILL)
}

// containerProcesses returns the host PIDs of the processes whose command
// is path and whose cgroup is the Pod's, as the kubelet names it.
func containerProcesses(path string, uid types.UID) []int {
	var pids []int
	for _, pid := range processesOf(path) {
		cgroup, err := os.ReadFile(filepath.Join("/proc", pid, "cgroup"))
		if err != nil || !strings.Contains(string(cgroup), "pod"+string(uid)) {
			continue
		}
		n, err := strconv.Atoi(pid)
		if err == nil {
			pids = append(pids, n)
		}
	}
	return pids
}

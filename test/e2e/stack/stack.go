package stack

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/kyma-project/kim-snatch/test/e2e/certmgmt"
	"github.com/kyma-project/kim-snatch/test/e2e/projector"
	"github.com/kyma-project/kim-snatch/test/framework"
	"github.com/kyma-project/kim-snatch/test/process"
)

// Names shared with deploy/.
const (
	Namespace         = "kyma-system"
	SecretName        = "kim-snatch-certificates"
	WebhookConfigName = "kim-snatch-mutating-webhook-configuration"
	WebhookEntryName  = "pods.kim-snatch.kyma-project.io"
	LeaseName         = "cabundle-syncer"
	ManagedByLabel    = "operator.kyma-project.io/managed-by"
	WebhookName       = "snatch-webhook"
	SyncerName        = "cabundle-syncer"
)

// Options shape the environment. Zero values take the defaults noted.
type Options struct {
	// Dir holds binaries, certificates and logs. Required.
	Dir string
	// KymaNodes and CustomerNodes are the Nodes per pool: 2 and 2.
	KymaNodes, CustomerNodes int
	// WebhookReplicas (2) and SyncerReplicas (2).
	WebhookReplicas, SyncerReplicas int
	// ProjectorDelay is how long after a Secret change the webhook
	// replicas see the new files; the kubelet takes about 60 s. Default 5 s.
	ProjectorDelay time.Duration
	// CAOverlap is the syncer's --ca-overlap; default 1h. Use a negative
	// value for 0 (replace).
	CAOverlap time.Duration
	// Progress receives one line per step, e.g. for `make run`.
	Progress func(format string, args ...any)
}

func (o *Options) defaults() {
	def := func(v *int, d int) {
		if *v == 0 {
			*v = d
		}
	}
	def(&o.KymaNodes, 2)
	def(&o.CustomerNodes, 2)
	def(&o.WebhookReplicas, 2)
	def(&o.SyncerReplicas, 2)
	if o.ProjectorDelay == 0 {
		o.ProjectorDelay = 5 * time.Second
	}
	if o.CAOverlap == 0 {
		o.CAOverlap = time.Hour
	}
	if o.CAOverlap < 0 {
		o.CAOverlap = 0
	}
	if o.Progress == nil {
		o.Progress = func(string, ...any) {}
	}
}

// Stack is the running environment.
type Stack struct {
	Cluster   *framework.Cluster
	Clientset kubernetes.Interface
	Issuer    *certmgmt.Issuer
	Projector *projector.Projector
	Webhooks  []*Replica
	Syncers   []*Replica

	opts       Options
	manifests  *WebhookManifests
	webhookBin string
	syncerBin  string
	cancel     context.CancelFunc
	pods       *podMirror
	endpoints  *endpoints

	mu    sync.Mutex
	extra []*Replica // started by AddWebhook
}

// Start brings the environment up and returns once Pods in a Kyma-managed
// namespace are mutated: the webhooks are Ready in the EndpointSlices of
// their Service, a syncer leads and the caBundle holds the CA. On error everything started is
// stopped again.
func Start(ctx context.Context, opts Options) (s *Stack, err error) {
	opts.defaults()
	if opts.Dir == "" {
		return nil, errors.New("stack: Options.Dir is required")
	}
	runCtx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	s = &Stack{opts: opts, cancel: cancel}
	defer func() {
		if err != nil {
			s.Stop()
			s = nil
		}
	}()
	p := opts.Progress

	if s.manifests, err = RenderWebhookManifests(); err != nil {
		return s, err
	}
	port, err := s.manifests.ServicePort()
	if err != nil {
		return s, err
	}

	p("starting etcd, kube-apiserver (aggregator routing: webhooks are called at their Service's endpoints), kube-scheduler and kube-controller-manager %s", framework.KubernetesVersion)
	if s.Cluster, err = framework.Start(ctx, framework.Options{Scheduler: true, ControllerManager: true, AggregatorRouting: true}); err != nil {
		return s, err
	}
	s.Clientset = s.Cluster.Clientset
	if s.Cluster.External() {
		return s, errors.New("stack: SNATCH_TEST_KUBECONFIG is set; the local stack needs a control plane of its own")
	}
	if s.endpoints, err = newEndpoints(s.Cluster.Config, port); err != nil {
		return s, err
	}
	p("creating %d nodes in pool %s and %d in pool %s", opts.KymaNodes, framework.KymaPool, opts.CustomerNodes, framework.CustomerPool)
	if _, err = s.Cluster.CreateNodes(ctx, framework.KymaPool, opts.KymaNodes); err != nil {
		return s, err
	}
	if _, err = s.Cluster.CreateNodes(ctx, framework.CustomerPool, opts.CustomerNodes); err != nil {
		return s, err
	}
	if err = CreateNamespace(ctx, s.Clientset, Namespace, true); err != nil {
		return s, err
	}

	p("building snatch-webhook and cabundle-syncer")
	binDir := filepath.Join(opts.Dir, "bin")
	if err = os.MkdirAll(binDir, 0o755); err != nil {
		return s, err
	}
	if s.webhookBin, err = process.Build(ctx, WebhookName, binDir); err != nil {
		return s, err
	}
	if s.syncerBin, err = process.Build(ctx, SyncerName, binDir); err != nil {
		return s, err
	}

	p("issuing the serving certificate into Secret %s/%s, as Gardener cert-management does", Namespace, SecretName)
	s.Issuer = &certmgmt.Issuer{
		Client: s.Clientset, Namespace: Namespace, Name: SecretName,
		DNSNames: []string{"localhost", WebhookName + "." + Namespace + ".svc", WebhookName + "." + Namespace + ".svc.cluster.local"},
		IPs:      []net.IP{net.IPv4(127, 0, 0, 1)},
	}
	if _, err = s.Issuer.Renew(ctx); err != nil {
		return s, err
	}

	if err = s.applyService(ctx); err != nil {
		return s, err
	}
	if err = s.startWebhooks(ctx, runCtx); err != nil {
		return s, err
	}
	if err = s.applyWebhookConfiguration(ctx); err != nil {
		return s, err
	}
	if err = s.startSyncers(ctx); err != nil {
		return s, err
	}
	s.pods = newPodMirror(s.Clientset)
	if err = s.pods.start(runCtx, s.allReplicas); err != nil {
		return s, err
	}
	p("waiting for a syncer to lead and write the caBundle")
	if err = s.WaitBundleHas(ctx, 2*time.Minute, s.currentFingerprint(ctx)); err != nil {
		return s, err
	}
	return s, nil
}

// allReplicas returns the webhook replicas, those of AddWebhook and the
// syncer replicas.
func (s *Stack) allReplicas() []*Replica {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append(append(append([]*Replica(nil), s.Webhooks...), s.extra...), s.Syncers...)
}

// MetricsTargets returns the replicas whose processes run: what
// Prometheus would scrape through the ServiceMonitors, as the Pods of a
// stopped replica are gone.
func (s *Stack) MetricsTargets() []*Replica {
	var out []*Replica
	for _, r := range s.allReplicas() {
		if r.Running() {
			out = append(out, r)
		}
	}
	return out
}

// Options returns the options the stack runs with, defaults filled in.
func (s *Stack) Options() Options { return s.opts }

// Stop stops every process and the control plane.
func (s *Stack) Stop() {
	if s.cancel != nil {
		s.cancel()
	}
	for _, r := range s.allReplicas() {
		r.Stop()
	}
	if s.Cluster != nil {
		_ = s.Cluster.Stop()
	}
}

// CreateNamespace creates a namespace, labelled as Kyma-managed if managed.
// An existing namespace is not an error.
func CreateNamespace(ctx context.Context, cs kubernetes.Interface, name string, managed bool) error {
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}
	if managed {
		ns.Labels = map[string]string{ManagedByLabel: "kyma"}
	}
	_, err := cs.CoreV1().Namespaces().Create(ctx, ns, metav1.CreateOptions{})
	if apierrors.IsAlreadyExists(err) {
		return nil
	}
	return err
}

func localAddr(port int) string { return net.JoinHostPort("127.0.0.1", strconv.Itoa(port)) }

// errorf prefixes stack errors uniformly.
func errorf(format string, args ...any) error { return fmt.Errorf("stack: "+format, args...) }

// portOf returns the port of a host:port address.
func portOf(addr string) string {
	_, port, err := net.SplitHostPort(addr)
	if err != nil {
		return ""
	}
	return port
}

package checktest

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"testing"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/uuid"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"
	"k8s.io/utils/ptr"

	"github.com/kyma-project/kim-snatch/pkg/affinity"
	"github.com/kyma-project/kim-snatch/pkg/certtest"
	"github.com/kyma-project/kim-snatch/pkg/check"
	"github.com/kyma-project/kim-snatch/pkg/syncer"
	"github.com/kyma-project/kim-snatch/pkg/syncer/syncertest"
	"github.com/kyma-project/kim-snatch/test/framework/objects"
	"github.com/kyma-project/kim-snatch/test/tools"
)

// Default names, as deploy/ sets them and the syncer defaults to them.
const (
	SecretName           = syncer.DefaultSecretName
	CAKey                = syncer.DefaultCAKey
	WebhookConfiguration = syncer.DefaultWebhookConfiguration
	LeaseName            = syncer.DefaultLeaseName
	// NameLabel carries the component, as deploy/ sets it; the webhook's
	// value is what --webhook-selector selects by default.
	NameLabel   = "app.kubernetes.io/name"
	WebhookName = "snatch-webhook"
	SyncerName  = "cabundle-syncer"
)

// LeaseDurationSeconds is the term of the Lease an Install holds. It is far
// longer than a test, so that the Lease stays live without renewals; tests
// that need it expired move its renewTime into the past.
const LeaseDurationSeconds = 3600

// Install is a healthy install: two ready webhook Pods, a running syncer
// Pod holding the Lease, the certificate Secret with a CA, and the
// MutatingWebhookConfiguration from deploy/webhook with that CA in every
// entry. Every object lives in Namespace, which Kyma manages.
type Install struct {
	Namespace   *corev1.Namespace
	CA          *certtest.Cert
	Secret      *corev1.Secret
	WebhookPods []*corev1.Pod
	SyncerPod   *corev1.Pod
	Lease       *coordinationv1.Lease
	MWC         *admissionregistrationv1.MutatingWebhookConfiguration
	// SyncerRole grants the syncer Pod's ServiceAccount what
	// deploy/syncer/rbac.yaml grants it on the MWC, bound by SyncerBinding;
	// Create leaves out whichever is nil.
	SyncerRole    *rbacv1.ClusterRole
	SyncerBinding *rbacv1.ClusterRoleBinding
	// Nodes form the Kyma pool; the Pods run on the first.
	Nodes []*corev1.Node
	// Service is the webhook's Service from deploy/webhook, and
	// EndpointSlices hold one ready endpoint for each webhook Pod: a TLS
	// listener on loopback that serves the CA's certificate, which names
	// the Service.
	Service        *corev1.Service
	EndpointSlices []*discoveryv1.EndpointSlice
}

// Healthy returns the objects of a healthy install in namespace, with the
// Lease renewed at now and the MutatingWebhookConfiguration named mwcName.
func Healthy(t testing.TB, namespace, mwcName string, now time.Time) *Install {
	t.Helper()
	ca := certtest.MustCA(t, certtest.Options{DNSNames: []string{"snatch-webhook." + namespace + ".svc"}})
	mwc := DeployedWebhookConfiguration(t)
	mwc.Name = mwcName
	for i := range mwc.Webhooks {
		mwc.Webhooks[i].ClientConfig.CABundle = ca.CertPEM
		mwc.Webhooks[i].ClientConfig.Service.Namespace = namespace
	}
	syncer := RunningPod(namespace, "cabundle-syncer-7d9f8c6b5-x2k4q", map[string]string{NameLabel: SyncerName})
	syncer.Spec.ServiceAccountName = SyncerName
	role, binding := syncerRBAC(namespace, mwcName)
	svc := DeployedWebhookService(t)
	svc.Namespace = namespace
	webhookPods := []*corev1.Pod{
		RunningPod(namespace, "snatch-webhook-5c8d7f9b6-abcde", map[string]string{NameLabel: WebhookName}),
		RunningPod(namespace, "snatch-webhook-5c8d7f9b6-fghij", map[string]string{NameLabel: WebhookName}),
	}
	// The Pod templates of deploy/ prefer the Kyma pool themselves.
	for _, p := range append([]*corev1.Pod{syncer}, webhookPods...) {
		p.Spec.Affinity = &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{
			PreferredDuringSchedulingIgnoredDuringExecution: []corev1.PreferredSchedulingTerm{affinity.DefaultPolicy().Term()},
		}}
	}
	var slices []*discoveryv1.EndpointSlice
	for _, p := range webhookPods {
		slices = append(slices, EndpointSlice(svc, p.Name, Serve(t, ca.TLSCertificate())))
	}
	return &Install{
		Namespace: &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{
			Name:   namespace,
			Labels: map[string]string{check.ManagedByLabel: check.ManagedByValue, corev1.LabelMetadataName: namespace},
		}},
		CA:             ca,
		Secret:         syncertest.CertSecret(namespace, SecretName, CAKey, ca.CertPEM),
		WebhookPods:    webhookPods,
		Service:        svc,
		EndpointSlices: slices,
		SyncerPod:      syncer,
		Lease:          HeldLease(namespace, LeaseName, syncer.Name+"_"+string(uuid.NewUUID()), now),
		MWC:            mwc,
		SyncerRole:     role,
		SyncerBinding:  binding,
		Nodes:          []*corev1.Node{PoolNode("cpu-worker-0-1", affinity.DefaultWorkerPool), PoolNode("cpu-worker-0-2", affinity.DefaultWorkerPool)},
	}
}

// syncerRBAC is the ClusterRole of deploy/syncer/rbac.yaml on the MWC,
// named for the install's namespace so that installs in one cluster keep
// apart, bound to the ServiceAccount cabundle-syncer in namespace.
func syncerRBAC(namespace, mwcName string) (*rbacv1.ClusterRole, *rbacv1.ClusterRoleBinding) {
	name := SyncerName + "-" + namespace
	role := &rbacv1.ClusterRole{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Rules: []rbacv1.PolicyRule{{
			APIGroups: []string{admissionregistrationv1.GroupName}, Resources: []string{"mutatingwebhookconfigurations"},
			ResourceNames: []string{mwcName}, Verbs: []string{"get", "list", "watch", "patch"},
		}},
	}
	binding := &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: name},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Namespace: namespace, Name: SyncerName}},
	}
	return role, binding
}

// Authorize makes cs answer SubjectAccessReviews as RBAC would with the
// install's SyncerRole and SyncerBinding alone: allowed when the binding
// names the review's ServiceAccount and a rule of the role matches.
func (in *Install) Authorize(cs *fake.Clientset) {
	cs.PrependReactor("create", "subjectaccessreviews", func(a k8stesting.Action) (bool, runtime.Object, error) {
		sar := a.(k8stesting.CreateAction).GetObject().(*authorizationv1.SubjectAccessReview).DeepCopy()
		sar.Status.Allowed = in.allows(sar.Spec)
		return true, sar, nil
	})
}

func (in *Install) allows(spec authorizationv1.SubjectAccessReviewSpec) bool {
	attrs := spec.ResourceAttributes
	if in.SyncerRole == nil || in.SyncerBinding == nil || attrs == nil {
		return false
	}
	bound := slices.ContainsFunc(in.SyncerBinding.Subjects, func(s rbacv1.Subject) bool {
		return s.Kind == rbacv1.ServiceAccountKind && spec.User == "system:serviceaccount:"+s.Namespace+":"+s.Name
	})
	return bound && slices.ContainsFunc(in.SyncerRole.Rules, func(r rbacv1.PolicyRule) bool {
		return slices.Contains(r.Verbs, attrs.Verb) && slices.Contains(r.APIGroups, attrs.Group) && slices.Contains(r.Resources, attrs.Resource) &&
			(len(r.ResourceNames) == 0 || slices.Contains(r.ResourceNames, attrs.Name))
	})
}

// Config is the check configuration that looks at this install, as the
// command's defaults would with --namespace set to its namespace.
func (in *Install) Config() check.Config {
	ns := in.Namespace.Name
	return check.Config{
		Namespace:               ns,
		SecretNamespace:         ns,
		SecretName:              in.Secret.Name,
		CAKey:                   CAKey,
		WebhookConfiguration:    in.MWC.Name,
		WebhookService:          in.Service.Name,
		LeaderElectionNamespace: ns,
		LeaderElectionID:        in.Lease.Name,
		WebhookSelector:         labels.SelectorFromSet(labels.Set{NameLabel: WebhookName}),
		MinReadyWebhooks:        2,
		MinCAValidity:           168 * time.Hour,
		PoolLabelKey:            affinity.DefaultPoolLabelKey,
		WorkerPool:              affinity.DefaultWorkerPool,
		AdmissionNamespace:      ns,
	}
}

// Admit makes cs answer a Pod create as the API server does with the
// webhook in place: the Pod comes back with the preferred term.
func Admit(cs *fake.Clientset) {
	cs.PrependReactor("create", "pods", func(a k8stesting.Action) (bool, runtime.Object, error) {
		p := a.(k8stesting.CreateAction).GetObject().(*corev1.Pod).DeepCopy()
		p.Spec.Affinity = &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{
			PreferredDuringSchedulingIgnoredDuringExecution: []corev1.PreferredSchedulingTerm{affinity.DefaultPolicy().Term()},
		}}
		return true, p, nil
	})
}

// Objects returns copies of every object, for a fake clientset.
func (in *Install) Objects() []runtime.Object {
	objs := []runtime.Object{in.Namespace.DeepCopy(), in.Secret.DeepCopy(), in.SyncerPod.DeepCopy(), in.Lease.DeepCopy(), in.MWC.DeepCopy()}
	for _, p := range in.WebhookPods {
		objs = append(objs, p.DeepCopy())
	}
	for _, n := range in.Nodes {
		objs = append(objs, n.DeepCopy())
	}
	if in.Service != nil {
		objs = append(objs, in.Service.DeepCopy())
	}
	for _, s := range in.EndpointSlices {
		objs = append(objs, s.DeepCopy())
	}
	return objs
}

// Create creates the install in a real cluster, without the Lease when it
// is nil. Pods get their status
// through the status subresource, as a kubelet would set it; the namespace
// and the Pods come before the MutatingWebhookConfiguration, so that the
// API server never tries to call the webhook, which does not run.
func (in *Install) Create(ctx context.Context, cs kubernetes.Interface) error {
	if _, err := cs.CoreV1().Namespaces().Create(ctx, in.Namespace, metav1.CreateOptions{}); err != nil {
		return fmt.Errorf("create namespace: %w", err)
	}
	for _, n := range in.Nodes {
		// Nodes are cluster-wide; another install in the cluster may have
		// created the same ones.
		if _, err := cs.CoreV1().Nodes().Create(ctx, n, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("create node %s: %w", n.Name, err)
		}
	}
	for _, p := range append([]*corev1.Pod{in.SyncerPod}, in.WebhookPods...) {
		if err := CreatePod(ctx, cs, p); err != nil {
			return err
		}
	}
	if in.Service != nil {
		if _, err := cs.CoreV1().Services(in.Service.Namespace).Create(ctx, in.Service, metav1.CreateOptions{}); err != nil {
			return fmt.Errorf("create service: %w", err)
		}
	}
	for _, s := range in.EndpointSlices {
		if _, err := cs.DiscoveryV1().EndpointSlices(s.Namespace).Create(ctx, s, metav1.CreateOptions{}); err != nil {
			return fmt.Errorf("create endpointslice %s: %w", s.Name, err)
		}
	}
	if _, err := cs.CoreV1().Secrets(in.Secret.Namespace).Create(ctx, in.Secret, metav1.CreateOptions{}); err != nil {
		return fmt.Errorf("create secret: %w", err)
	}
	// A test that runs a real syncer leaves the Lease to it.
	if in.Lease != nil {
		if _, err := cs.CoordinationV1().Leases(in.Lease.Namespace).Create(ctx, in.Lease, metav1.CreateOptions{}); err != nil {
			return fmt.Errorf("create lease: %w", err)
		}
	}
	if in.SyncerRole != nil {
		if _, err := cs.RbacV1().ClusterRoles().Create(ctx, in.SyncerRole, metav1.CreateOptions{}); err != nil {
			return fmt.Errorf("create clusterrole: %w", err)
		}
	}
	if in.SyncerBinding != nil {
		if _, err := cs.RbacV1().ClusterRoleBindings().Create(ctx, in.SyncerBinding, metav1.CreateOptions{}); err != nil {
			return fmt.Errorf("create clusterrolebinding: %w", err)
		}
	}
	if in.SyncerRole != nil && in.SyncerBinding != nil {
		if err := in.WaitAuthorized(ctx, cs, true); err != nil {
			return err
		}
	}
	if _, err := syncertest.CreateWebhookConfiguration(ctx, cs, in.MWC); err != nil {
		return fmt.Errorf("create mutatingwebhookconfiguration: %w", err)
	}
	return nil
}

// WaitAuthorized waits until the API server's authorizer, which learns of
// RBAC objects from its informers, answers want to whether the syncer
// Pod's ServiceAccount may patch the MWC.
func (in *Install) WaitAuthorized(ctx context.Context, cs kubernetes.Interface, want bool) error {
	spec := authorizationv1.SubjectAccessReviewSpec{
		User: "system:serviceaccount:" + in.SyncerPod.Namespace + ":" + in.SyncerPod.Spec.ServiceAccountName,
		ResourceAttributes: &authorizationv1.ResourceAttributes{
			Verb: "patch", Group: admissionregistrationv1.GroupName, Resource: "mutatingwebhookconfigurations", Name: in.MWC.Name,
		},
	}
	var last error
	err := wait.PollUntilContextTimeout(ctx, 50*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		sar, err := cs.AuthorizationV1().SubjectAccessReviews().Create(ctx, &authorizationv1.SubjectAccessReview{Spec: spec}, metav1.CreateOptions{})
		last = err
		return err == nil && sar.Status.Allowed == want, nil
	})
	if err != nil {
		return fmt.Errorf("the authorizer never answered %v to %s patching MutatingWebhookConfiguration %s: %w (last error %v)", want, spec.User, in.MWC.Name, err, last)
	}
	return nil
}

// PoolNode returns a Ready Node of the given pool with 4 CPUs and 16 GiB.
// The API server keeps the status a create sends for Nodes.
func PoolNode(name, pool string) *corev1.Node {
	capacity := corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("4"), corev1.ResourceMemory: resource.MustParse("16Gi"), corev1.ResourcePods: resource.MustParse("110")}
	return &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{affinity.DefaultPoolLabelKey: pool}},
		Status: corev1.NodeStatus{
			Capacity: capacity, Allocatable: capacity,
			Conditions: []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue}},
		},
	}
}

// CreatePod creates p and then writes its status, which the API server
// drops on create.
func CreatePod(ctx context.Context, cs kubernetes.Interface, p *corev1.Pod) error {
	created, err := cs.CoreV1().Pods(p.Namespace).Create(ctx, p, metav1.CreateOptions{})
	if err != nil {
		return fmt.Errorf("create pod %s: %w", p.Name, err)
	}
	created.Status = p.Status
	if _, err := cs.CoreV1().Pods(p.Namespace).UpdateStatus(ctx, created, metav1.UpdateOptions{}); err != nil {
		return fmt.Errorf("set status of pod %s: %w", p.Name, err)
	}
	return nil
}

// RunningPod returns a Pod bound to a node, Running and Ready. It passes
// the restricted Pod Security profile.
func RunningPod(namespace, name string, podLabels map[string]string) *corev1.Pod {
	now := metav1.Now()
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name, Labels: podLabels},
		Spec: corev1.PodSpec{
			NodeName: "cpu-worker-0-1",
			SecurityContext: &corev1.PodSecurityContext{
				RunAsNonRoot:   ptr.To(true),
				SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault},
			},
			Containers: []corev1.Container{{
				Name:  "main",
				Image: "registry.invalid/" + name,
				SecurityContext: &corev1.SecurityContext{
					AllowPrivilegeEscalation: ptr.To(false),
					Capabilities:             &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}},
				},
			}},
		},
		Status: corev1.PodStatus{
			Phase: corev1.PodRunning,
			Conditions: []corev1.PodCondition{
				{Type: corev1.PodReady, Status: corev1.ConditionTrue, LastTransitionTime: now},
				{Type: corev1.ContainersReady, Status: corev1.ConditionTrue, LastTransitionTime: now},
			},
		},
	}
}

// NotReady returns a copy of p whose Ready condition is false, as when its
// readiness probe fails.
func NotReady(p *corev1.Pod) *corev1.Pod {
	p = p.DeepCopy()
	for i := range p.Status.Conditions {
		p.Status.Conditions[i].Status = corev1.ConditionFalse
		p.Status.Conditions[i].Reason = "ContainersNotReady"
	}
	return p
}

// HeldLease returns a leader election Lease held by holder, renewed at now.
func HeldLease(namespace, name, holder string, now time.Time) *coordinationv1.Lease {
	renew := metav1.NewMicroTime(now)
	return &coordinationv1.Lease{
		ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name},
		Spec: coordinationv1.LeaseSpec{
			HolderIdentity:       ptr.To(holder),
			LeaseDurationSeconds: ptr.To[int32](LeaseDurationSeconds),
			AcquireTime:          &renew,
			RenewTime:            &renew,
			LeaseTransitions:     ptr.To[int32](0),
		},
	}
}

// Serve listens on loopback until t ends and completes a TLS handshake
// with cert on every connection, as a webhook replica does before it reads
// a request. It returns the address.
func Serve(t testing.TB, cert tls.Certificate) string {
	t.Helper()
	l, err := tls.Listen("tcp", "127.0.0.1:0", &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = l.Close() })
	go func() {
		for {
			conn, err := l.Accept()
			if errors.Is(err, net.ErrClosed) {
				return
			}
			if err != nil {
				continue
			}
			go func() {
				_ = conn.(*tls.Conn).Handshake()
				_ = conn.Close()
			}()
		}
	}()
	return l.Addr().String()
}

// EndpointSlice returns an EndpointSlice of svc's first port with one
// ready endpoint at addr for Pod pod. Its address type is FQDN, as the API
// server refuses loopback in an IPv4 slice; the address is dialled as it
// stands either way.
func EndpointSlice(svc *corev1.Service, pod, addr string) *discoveryv1.EndpointSlice {
	host, port, _ := net.SplitHostPort(addr)
	n, _ := strconv.Atoi(port)
	return &discoveryv1.EndpointSlice{
		ObjectMeta: metav1.ObjectMeta{
			Namespace: svc.Namespace, Name: pod,
			Labels: map[string]string{discoveryv1.LabelServiceName: svc.Name},
		},
		AddressType: discoveryv1.AddressTypeFQDN,
		Ports:       []discoveryv1.EndpointPort{{Name: ptr.To(svc.Spec.Ports[0].Name), Port: ptr.To(int32(n)), Protocol: ptr.To(corev1.ProtocolTCP)}}, //nolint:gosec // a TCP port
		Endpoints: []discoveryv1.Endpoint{{
			Addresses:  []string{host},
			Conditions: discoveryv1.EndpointConditions{Ready: ptr.To(true)},
			TargetRef:  &corev1.ObjectReference{Kind: "Pod", Namespace: svc.Namespace, Name: pod},
		}},
	}
}

// DeployedWebhookService reads the Service the webhook entries call from
// deploy/webhook.
func DeployedWebhookService(t testing.TB) *corev1.Service {
	t.Helper()
	var svc corev1.Service
	readDeployed(t, "service.yaml", &svc) // the first document is the webhook's Service
	return &svc
}

// DeployedWebhookConfiguration reads the MutatingWebhookConfiguration from
// deploy/webhook, as `kubectl apply -k deploy/webhook` creates it.
func DeployedWebhookConfiguration(t testing.TB) *admissionregistrationv1.MutatingWebhookConfiguration {
	t.Helper()
	var mwc admissionregistrationv1.MutatingWebhookConfiguration
	readDeployed(t, "mutatingwebhookconfiguration.yaml", &mwc)
	return &mwc
}

// readDeployed decodes the first document of deploy/webhook/<file> into
// obj, strictly.
func readDeployed(t testing.TB, file string, obj any) {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(tools.MustRepoRoot(t), "deploy", "webhook", file))
	if err != nil {
		t.Fatal(err)
	}
	objs, err := objects.Decode(data)
	if err == nil && len(objs) == 0 {
		err = errors.New("no object")
	}
	if err == nil {
		err = objects.Into(objs[0], obj)
	}
	if err != nil {
		t.Fatalf("deploy/webhook/%s: %v", file, err)
	}
}

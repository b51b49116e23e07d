package manifests

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/restmapper"

	"github.com/kyma-project/kim-snatch/pkg/syncer"
	"github.com/kyma-project/kim-snatch/test/framework"
	"github.com/kyma-project/kim-snatch/test/framework/objects"
	"github.com/kyma-project/kim-snatch/test/framework/poll"
)

// fieldManager applies the test's objects; only dry-runs and test fixtures
// carry it.
const fieldManager = "kim-snatch-manifests-test"

// One control plane serves every test in this package; TestMain stops it.
var shared struct {
	once    sync.Once
	cluster *framework.Cluster
	env     *apiEnv
	err     error
}

// apiEnv is a kube-apiserver with the test CRDs installed.
type apiEnv struct {
	cluster  *framework.Cluster
	cs       kubernetes.Interface
	dyn      dynamic.Interface
	mapper   *restmapper.DeferredDiscoveryRESTMapper
	warnings *warningRecorder
}

// warningRecorder keeps the API server's warnings (PodSecurity's among
// them), which client-go would otherwise only log.
type warningRecorder struct {
	mu   sync.Mutex
	msgs []string
}

func (w *warningRecorder) HandleWarningHeader(code int, _ string, text string) {
	if code != 299 || text == "" {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	w.msgs = append(w.msgs, text)
}

// take returns and forgets the warnings seen so far.
func (w *warningRecorder) take() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	out := w.msgs
	w.msgs = nil
	return out
}

// apiServer returns the shared control plane, starting it on first use.
func apiServer(t *testing.T) *apiEnv {
	t.Helper()
	if testing.Short() {
		t.Skip("starts etcd and kube-apiserver")
	}
	shared.once.Do(func() { shared.env, shared.err = startAPIServer() })
	if shared.err != nil {
		t.Fatalf("control plane: %v", shared.err)
	}
	return shared.env
}

func startAPIServer() (*apiEnv, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	c, err := framework.Start(ctx, framework.Options{
		// The framework turns ServiceAccount admission off so that Pods need
		// not wait for default ServiceAccounts. Here it is on, as in every
		// real cluster: Pods built from the templates get the token volume
		// a real Pod gets, and need their ServiceAccount to exist.
		APIServerArgs: []string{"--disable-admission-plugins=TaintNodesByCondition"},
	})
	if err != nil {
		return nil, err
	}
	shared.cluster = c
	env, err := newAPIEnv(c)
	if err != nil {
		return nil, err
	}
	if err := env.installCRDs(ctx, "*.yaml"); err != nil {
		return nil, err
	}
	env.warnings.take()
	return env, nil
}

// newAPIEnv returns the clients of the control plane c, whose warnings it
// records.
func newAPIEnv(c *framework.Cluster) (*apiEnv, error) {
	rec := &warningRecorder{}
	cfg := rest.CopyConfig(c.Config)
	cfg.WarningHandler = rec
	cs, dyn, err := framework.Clients(cfg)
	if err != nil {
		return nil, err
	}
	dc, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		return nil, err
	}
	return &apiEnv{
		cluster:  c,
		cs:       cs,
		dyn:      dyn,
		mapper:   restmapper.NewDeferredDiscoveryRESTMapper(memory.NewMemCacheClient(dc)),
		warnings: rec,
	}, nil
}

var crdResource = schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}

// installCRDs creates the CRDs of the files in testdata/crds that match
// pattern (keeping any that exist already, as on a real cluster) and waits
// until they are served.
func (e *apiEnv) installCRDs(ctx context.Context, pattern string) error {
	files, err := filepath.Glob(filepath.Join("testdata", "crds", pattern))
	if err != nil || len(files) == 0 {
		return fmt.Errorf("no CRDs in testdata/crds: %v", err)
	}
	var crds []*unstructured.Unstructured
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			return err
		}
		objs, err := decodeYAML(data)
		if err != nil {
			return fmt.Errorf("%s: %w", f, err)
		}
		crds = append(crds, objs...)
	}
	for _, crd := range crds {
		_, err := e.dyn.Resource(crdResource).Create(ctx, crd, metav1.CreateOptions{FieldValidation: "Strict"})
		if err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("create CRD %s: %w", crd.GetName(), err)
		}
	}
	for _, crd := range crds {
		err := poll.Until(ctx, "CRD "+crd.GetName()+" to be Established", func(ctx context.Context) error {
			got, err := e.dyn.Resource(crdResource).Get(ctx, crd.GetName(), metav1.GetOptions{})
			if err != nil {
				return err
			}
			conds, _, _ := unstructured.NestedSlice(got.Object, "status", "conditions")
			for _, c := range conds {
				c := c.(map[string]any)
				if c["type"] == "Established" && c["status"] == "True" {
					return nil
				}
			}
			return fmt.Errorf("CRD %s is not Established", crd.GetName())
		}, poll.Timeout(time.Minute))
		if err != nil {
			return err
		}
		group, _, _ := unstructured.NestedString(crd.Object, "spec", "group")
		kind, _, _ := unstructured.NestedString(crd.Object, "spec", "names", "kind")
		err = poll.Until(ctx, "discovery to serve "+kind+"."+group, func(context.Context) error {
			e.mapper.Reset()
			_, err := e.mapper.RESTMapping(schema.GroupKind{Group: group, Kind: kind})
			return err
		}, poll.Timeout(time.Minute))
		if err != nil {
			return err
		}
	}
	return nil
}

// resource returns the client for o's kind, in o's namespace.
func (e *apiEnv) resource(o *unstructured.Unstructured) (dynamic.ResourceInterface, error) {
	gvk := o.GroupVersionKind()
	m, err := e.mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
	if err != nil {
		return nil, err
	}
	if m.Scope.Name() == meta.RESTScopeNameNamespace {
		return e.dyn.Resource(m.Resource).Namespace(o.GetNamespace()), nil
	}
	return e.dyn.Resource(m.Resource), nil
}

// apply server-side applies o, for real or as a dry-run, with strict field
// validation: an unknown or duplicate field is an error, not a warning.
func (e *apiEnv) apply(ctx context.Context, o *unstructured.Unstructured, dryRun bool) error {
	res, err := e.resource(o)
	if err != nil {
		return err
	}
	data, err := json.Marshal(o.Object)
	if err != nil {
		return err
	}
	opts := metav1.PatchOptions{FieldManager: fieldManager, Force: ptr(true), FieldValidation: "Strict"}
	if dryRun {
		opts.DryRun = []string{metav1.DryRunAll}
	}
	_, err = res.Patch(ctx, o.GetName(), types.ApplyPatchType, data, opts)
	return err
}

// namespace creates a namespace with labels, or adds the labels to an
// existing one.
func (e *apiEnv) namespace(t *testing.T, name string, labels map[string]string) {
	t.Helper()
	ns := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]any{"name": name}}}
	ns.SetLabels(labels)
	if err := e.apply(t.Context(), ns, false); err != nil {
		t.Fatalf("namespace %s: %v", name, err)
	}
}

// runID tells this run's objects apart on a shared cluster.
var runID = fmt.Sprintf("%x", time.Now().UnixNano()&0xffffff)

// restricted labels a namespace to enforce, and warn about, the restricted
// Pod Security profile of the API server's own version.
var restricted = map[string]string{
	"pod-security.kubernetes.io/enforce":         "restricted",
	"pod-security.kubernetes.io/enforce-version": "latest",
	"pod-security.kubernetes.io/warn":            "restricted",
	"pod-security.kubernetes.io/warn-version":    "latest",
}

// Every object of every kustomization is accepted by the real API server:
// server-side apply as a dry-run, strict field validation, no warnings. The
// namespace enforces the restricted profile, so the Deployments' templates
// would draw PodSecurity warnings if they broke it.
func TestAPIServerAcceptsEveryObjectStrictly(t *testing.T) {
	env := apiServer(t)
	env.namespace(t, namespace, restricted)
	// A dry run creates no namespace: the check's objects need theirs.
	env.namespace(t, checkNamespace, restricted)
	env.warnings.take()
	tests := []struct {
		name string
		dir  string
	}{
		{name: "webhook_base_is_accepted", dir: webhookBase},
		{name: "syncer_base_is_accepted", dir: syncerBase},
		{name: "default_install_is_accepted", dir: defaultInstall},
		{name: "cert_manager_example_is_accepted", dir: certManagerSample},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			objs := render(t, tt.dir)
			for _, o := range objs {
				if err := env.apply(t.Context(), o, true); err != nil {
					t.Errorf("%s: %v", id(o), err)
				}
				if w := env.warnings.take(); len(w) > 0 {
					t.Errorf("%s: the API server warns: %q", id(o), w)
				}
			}
		})
	}
}

// podFromTemplate builds the Pod a Deployment's ReplicaSet would create.
func podFromTemplate(d *appsv1.Deployment, ns string) *corev1.Pod {
	tmpl := d.Spec.Template.DeepCopy()
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: d.Name, Namespace: ns, Labels: tmpl.Labels, Annotations: tmpl.Annotations},
		Spec:       tmpl.Spec,
	}
}

// The API server's verdict on each Deployment's Pod in a namespace that
// enforces the restricted Pod Security profile. The cases that break the
// profile on purpose prove that the namespace does enforce it.
func TestPodTemplatesPassRestrictedPodSecurity(t *testing.T) {
	env := apiServer(t)
	ns := "kim-snatch-restricted-" + runID
	env.namespace(t, ns, restricted)
	objs := render(t, defaultInstall)
	// What the Priority and ServiceAccount admission plugins look up.
	for _, o := range append(objects.OfKind(objs, "ServiceAccount"), objects.OfKind(objs, "PriorityClass")...) {
		if o.GetNamespace() != "" {
			o.SetNamespace(ns)
		}
		if err := env.apply(t.Context(), o, false); err != nil {
			t.Fatalf("%s: %v", id(o), err)
		}
	}
	env.warnings.take()

	tests := []struct {
		name      string
		breakIt   func(*corev1.Pod)
		wantAdmit bool
	}{
		{name: "template_as_is_passes", wantAdmit: true},
		{name: "privilege_escalation_allowed_is_rejected", breakIt: func(p *corev1.Pod) {
			for i := range p.Spec.Containers {
				p.Spec.Containers[i].SecurityContext.AllowPrivilegeEscalation = ptr(true)
			}
		}},
		{name: "running_as_root_is_rejected", breakIt: func(p *corev1.Pod) {
			p.Spec.SecurityContext.RunAsNonRoot = nil
			p.Spec.SecurityContext.RunAsUser = ptr(int64(0))
		}},
		{name: "capabilities_kept_are_rejected", breakIt: func(p *corev1.Pod) {
			for i := range p.Spec.Containers {
				p.Spec.Containers[i].SecurityContext.Capabilities = nil
			}
		}},
	}
	for _, d := range objects.OfKind(objs, "Deployment") {
		var dep appsv1.Deployment
		typed(t, d, &dep)
		for _, tt := range tests {
			t.Run(strings.ReplaceAll(dep.Name, "-", "_")+"/"+tt.name, func(t *testing.T) {
				pod := podFromTemplate(&dep, ns)
				if tt.breakIt != nil {
					tt.breakIt(pod)
				}
				_, err := env.cs.CoreV1().Pods(ns).Create(t.Context(), pod, metav1.CreateOptions{
					DryRun:          []string{metav1.DryRunAll},
					FieldValidation: "Strict",
				})
				env.warnings.take()
				switch {
				case tt.wantAdmit && err != nil:
					t.Fatalf("the Pod of %s is rejected: %v", dep.Name, err)
				case !tt.wantAdmit && err == nil:
					t.Fatalf("the namespace admits a Pod that breaks the restricted profile; the check above proves nothing")
				case !tt.wantAdmit && (!apierrors.IsForbidden(err) || !strings.Contains(err.Error(), "violates PodSecurity")):
					t.Fatalf("want a PodSecurity rejection, got %v", err)
				}
			})
		}
	}
}

// applyRBAC applies the ServiceAccounts and RBAC objects of objs.
func applyRBAC(t *testing.T, env *apiEnv, objs []*unstructured.Unstructured) {
	t.Helper()
	for _, o := range objs {
		switch o.GetKind() {
		case "ServiceAccount", "Role", "RoleBinding", "ClusterRole", "ClusterRoleBinding":
			if err := env.apply(t.Context(), o, false); err != nil {
				t.Fatalf("%s: %v", id(o), err)
			}
		}
	}
}

// checkCanCreateEvents checks that user may create Events through either
// API; controller-runtime's recorders use one or the other.
func checkCanCreateEvents(t *testing.T, user string, can func(*testing.T, authorizationv1.ResourceAttributes) bool) {
	t.Helper()
	core := can(t, authorizationv1.ResourceAttributes{Namespace: namespace, Verb: "create", Resource: "events"})
	events := can(t, authorizationv1.ResourceAttributes{Group: "events.k8s.io", Namespace: namespace, Verb: "create", Resource: "events"})
	if !core && !events {
		t.Fatalf("%s may not create Events in %s", user, namespace)
	}
}

// checkCannotGetMetrics checks that user may not get /metrics: the
// metrics-reader role is for the scraper, and the base binds it to no one.
func checkCannotGetMetrics(t *testing.T, env *apiEnv, user string, groups []string) {
	t.Helper()
	sar := &authorizationv1.SubjectAccessReview{Spec: authorizationv1.SubjectAccessReviewSpec{User: user, Groups: groups,
		NonResourceAttributes: &authorizationv1.NonResourceAttributes{Path: "/metrics", Verb: "get"}}}
	res, err := env.cs.AuthorizationV1().SubjectAccessReviews().Create(t.Context(), sar, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if res.Status.Allowed {
		t.Errorf("%s may get /metrics: %s", user, res.Status.Reason)
	}
}

// The syncer's RBAC, as the API server's authorizer sees it: exactly the one
// Secret, the one emergency-disable ConfigMap, read only, and the one
// webhook configuration, plus its shipped Lease and Events.
func TestSyncerRBACGrantsOnlyItsSecretAndWebhookConfiguration(t *testing.T) {
	env := apiServer(t)
	env.namespace(t, namespace, nil)
	env.namespace(t, checkNamespace, nil)
	objs := render(t, syncerBase)
	applyRBAC(t, env, objs)
	lease := flags(t, container(t, deployment(t, objs, "cabundle-syncer")))["leader-election-id"]
	user := "system:serviceaccount:" + namespace + ":" + syncerServiceAccount
	groups := []string{"system:serviceaccounts", "system:serviceaccounts:" + namespace, "system:authenticated"}
	can := func(t *testing.T, a authorizationv1.ResourceAttributes) bool {
		t.Helper()
		sar := &authorizationv1.SubjectAccessReview{Spec: authorizationv1.SubjectAccessReviewSpec{User: user, Groups: groups, ResourceAttributes: &a}}
		var res *authorizationv1.SubjectAccessReview
		// RBAC changes reach the authorizer's cache within moments.
		poll.Eventually(t, "an answer to a SubjectAccessReview", func(ctx context.Context) error {
			var err error
			res, err = env.cs.AuthorizationV1().SubjectAccessReviews().Create(ctx, sar, metav1.CreateOptions{})
			return err
		}, poll.Timeout(10*time.Second))
		return res.Status.Allowed
	}
	secret := func(verb, name string) authorizationv1.ResourceAttributes {
		return authorizationv1.ResourceAttributes{Namespace: namespace, Verb: verb, Resource: "secrets", Name: name}
	}
	mwc := func(verb, name string) authorizationv1.ResourceAttributes {
		return authorizationv1.ResourceAttributes{Group: "admissionregistration.k8s.io", Verb: verb, Resource: "mutatingwebhookconfigurations", Name: name}
	}
	configMap := func(verb, name string) authorizationv1.ResourceAttributes {
		return authorizationv1.ResourceAttributes{Namespace: namespace, Verb: verb, Resource: "configmaps", Name: name}
	}
	leases := func(ns, verb, name string) authorizationv1.ResourceAttributes {
		return authorizationv1.ResourceAttributes{Group: "coordination.k8s.io", Namespace: ns, Verb: verb, Resource: "leases", Name: name}
	}

	// Wait for the bindings to take effect before judging denials.
	poll.Eventually(t, "the bindings to take effect", func(context.Context) error {
		if !can(t, secret("get", secretName)) {
			return fmt.Errorf("%s cannot get Secret %s/%s", user, namespace, secretName)
		}
		return nil
	})

	tests := []struct {
		name  string
		attrs authorizationv1.ResourceAttributes
		want  bool
	}{
		{name: "get_the_secret_is_allowed", attrs: secret("get", secretName), want: true},
		{name: "list_the_secret_by_name_is_allowed", attrs: secret("list", secretName), want: true},
		{name: "watch_the_secret_by_name_is_allowed", attrs: secret("watch", secretName), want: true},
		{name: "get_another_secret_is_denied", attrs: secret("get", "other")},
		{name: "list_all_secrets_is_denied", attrs: secret("list", "")},
		{name: "watch_all_secrets_is_denied", attrs: secret("watch", "")},
		{name: "update_the_secret_is_denied", attrs: secret("update", secretName)},
		{name: "delete_the_secret_is_denied", attrs: secret("delete", secretName)},
		// The emergency-disable marker: read, never written; the documented
		// disable creates it and the restore deletes it.
		{name: "get_the_marker_is_allowed", attrs: configMap("get", syncer.EmergencyDisableName), want: true},
		{name: "list_the_marker_by_name_is_allowed", attrs: configMap("list", syncer.EmergencyDisableName), want: true},
		{name: "watch_the_marker_by_name_is_allowed", attrs: configMap("watch", syncer.EmergencyDisableName), want: true},
		{name: "get_another_configmap_is_denied", attrs: configMap("get", "other")},
		{name: "list_all_configmaps_is_denied", attrs: configMap("list", "")},
		{name: "create_configmaps_is_denied", attrs: configMap("create", "")},
		{name: "update_the_marker_is_denied", attrs: configMap("update", syncer.EmergencyDisableName)},
		{name: "delete_the_marker_is_denied", attrs: configMap("delete", syncer.EmergencyDisableName)},
		{name: "get_the_webhook_configuration_is_allowed", attrs: mwc("get", webhookConfiguration), want: true},
		{name: "list_the_webhook_configuration_by_name_is_allowed", attrs: mwc("list", webhookConfiguration), want: true},
		{name: "watch_the_webhook_configuration_by_name_is_allowed", attrs: mwc("watch", webhookConfiguration), want: true},
		{name: "patch_the_webhook_configuration_is_allowed", attrs: mwc("patch", webhookConfiguration), want: true},
		{name: "patch_another_webhook_configuration_is_denied", attrs: mwc("patch", "other")},
		{name: "list_all_webhook_configurations_is_denied", attrs: mwc("list", "")},
		{name: "create_webhook_configurations_is_denied", attrs: mwc("create", "")},
		{name: "update_the_webhook_configuration_is_denied", attrs: mwc("update", webhookConfiguration)},
		{name: "delete_the_webhook_configuration_is_denied", attrs: mwc("delete", webhookConfiguration)},
		{name: "patch_validating_webhook_configurations_is_denied", attrs: authorizationv1.ResourceAttributes{Group: "admissionregistration.k8s.io", Verb: "patch", Resource: "validatingwebhookconfigurations", Name: webhookConfiguration}},
		// deploy/syncer/lease.yaml ships the Lease: no create, by any name.
		{name: "create_leases_is_denied", attrs: leases(namespace, "create", "")},
		{name: "create_its_lease_is_denied", attrs: leases(namespace, "create", lease)},
		{name: "delete_its_lease_is_denied", attrs: leases(namespace, "delete", lease)},
		{name: "get_its_lease_is_allowed", attrs: leases(namespace, "get", lease), want: true},
		{name: "update_its_lease_is_allowed", attrs: leases(namespace, "update", lease), want: true},
		{name: "create_leases_elsewhere_is_denied", attrs: leases("default", "create", "")},
		{name: "update_leases_elsewhere_is_denied", attrs: leases("default", "update", lease)},
		// Secure metrics check each scrape's token and its access to /metrics.
		{name: "create_token_reviews_is_allowed", attrs: authorizationv1.ResourceAttributes{Group: "authentication.k8s.io", Verb: "create", Resource: "tokenreviews"}, want: true},
		{name: "create_subject_access_reviews_is_allowed", attrs: authorizationv1.ResourceAttributes{Group: "authorization.k8s.io", Verb: "create", Resource: "subjectaccessreviews"}, want: true},
		{name: "create_local_subject_access_reviews_is_denied", attrs: authorizationv1.ResourceAttributes{Group: "authorization.k8s.io", Namespace: namespace, Verb: "create", Resource: "localsubjectaccessreviews"}},
		{name: "create_service_account_tokens_is_denied", attrs: authorizationv1.ResourceAttributes{Namespace: namespace, Verb: "create", Resource: "serviceaccounts", Subresource: "token", Name: syncerServiceAccount}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := can(t, tt.attrs); got != tt.want {
				t.Fatalf("%s may %s %+v: %v, want %v", user, tt.attrs.Verb, tt.attrs, got, tt.want)
			}
		})
	}

	t.Run("get_metrics_is_denied", func(t *testing.T) { checkCannotGetMetrics(t, env, user, groups) })
	t.Run("create_events_is_allowed", func(t *testing.T) { checkCanCreateEvents(t, user, can) })
}

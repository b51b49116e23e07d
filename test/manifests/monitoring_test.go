package manifests

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	networkingv1 "k8s.io/api/networking/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/kyma-project/kim-snatch/test/framework/objects"
	"github.com/kyma-project/kim-snatch/test/tools"
)

// prometheusLabel is the label that the ServiceMonitors and PrometheusRules
// carry for a Prometheus serviceMonitorSelector and ruleSelector to match
// (docs/operations.md, "Prometheus").
const prometheusLabel, prometheusLabelValue = "prometheus", "kyma"

// Every ServiceMonitor and PrometheusRule, in each kustomization, carries
// the selector label.
func TestMonitoringObjectsCarryTheSelectorLabel(t *testing.T) {
	for _, dir := range allKustomizations {
		n := 0
		for _, o := range render(t, dir) {
			if o.GetKind() != "ServiceMonitor" && o.GetKind() != "PrometheusRule" {
				continue
			}
			n++
			if got := o.GetLabels()[prometheusLabel]; got != prometheusLabelValue {
				t.Errorf("%s: %s has label %s=%q, want %q", dir, id(o), prometheusLabel, got, prometheusLabelValue)
			}
		}
		if n == 0 && dir != webhookBase && dir != syncerBase {
			t.Errorf("%s renders no ServiceMonitor or PrometheusRule", dir)
		}
	}
}

// writeMonitoringOverlay writes, under bin/ until t ends, an overlay of the
// default installation that adds a label and changes the monitoring
// objects' label, and returns its folder relative to the repository root.
func writeMonitoringOverlay(t *testing.T) string {
	t.Helper()
	root := tools.MustRepoRoot(t)
	dir, err := os.MkdirTemp(filepath.Join(root, "bin"), "overlay-")
	if err != nil {
		// bin/ may not exist in a fresh tree.
		if err := os.MkdirAll(filepath.Join(root, "bin"), 0o755); err != nil {
			t.Fatal(err)
		}
		if dir, err = os.MkdirTemp(filepath.Join(root, "bin"), "overlay-"); err != nil {
			t.Fatal(err)
		}
	}
	t.Cleanup(func() { _ = os.RemoveAll(dir) })
	rel, err := filepath.Rel(dir, filepath.Join(root, defaultInstall))
	if err != nil {
		t.Fatal(err)
	}
	overlay := `apiVersion: kustomize.config.k8s.io/v1beta1
kind: Kustomization
resources:
  - ` + filepath.ToSlash(rel) + `
# Add a label to every object; selectors stay as they are.
labels:
  - pairs:
      release: kube-prometheus-stack
# Or change the default label of the monitoring objects only.
patches:
  - target:
      kind: ServiceMonitor|PrometheusRule
    patch: |-
      - op: replace
        path: /metadata/labels/prometheus
        value: monitoring
`
	if err := os.WriteFile(filepath.Join(dir, "kustomization.yaml"), []byte(overlay), 0o600); err != nil {
		t.Fatal(err)
	}
	relDir, err := filepath.Rel(root, dir)
	if err != nil {
		t.Fatal(err)
	}
	return relDir
}

// The overlay of docs/operations.md sets the monitoring objects' labels
// without touching any selector of the installation.
func TestOverlaySetsMonitoringLabels(t *testing.T) {
	relDir := writeMonitoringOverlay(t)
	objs := render(t, relDir)
	base := render(t, defaultInstall)
	if len(objs) != len(base) {
		t.Fatalf("the overlay renders %d objects, the base %d", len(objs), len(base))
	}
	n := 0
	for _, o := range objs {
		if o.GetLabels()["release"] != "kube-prometheus-stack" {
			t.Errorf("%s lacks the overlay's label", id(o))
		}
		if o.GetKind() == "ServiceMonitor" || o.GetKind() == "PrometheusRule" {
			n++
			if got := o.GetLabels()[prometheusLabel]; got != "monitoring" {
				t.Errorf("%s has %s=%q after the overlay, want monitoring", id(o), prometheusLabel, got)
			}
		}
		for _, b := range base {
			if id(b) != id(o) {
				continue
			}
			for _, path := range [][]string{{"spec", "selector"}, {"spec", "podSelector"}} {
				if got, want := nested(o, path), nested(b, path); got != want {
					t.Errorf("%s: the overlay changed %s: %s, was %s", id(o), strings.Join(path, "."), got, want)
				}
			}
		}
	}
	// Two ServiceMonitors, the two binaries' PrometheusRules, and the
	// monitoring profile's (docs/operations.md, "Monitoring profiles").
	if n != 5 {
		t.Errorf("the overlay renders %d ServiceMonitors and PrometheusRules, want 5", n)
	}
}

// nested returns the field at path, encoded for comparison.
func nested(o *unstructured.Unstructured, path []string) string {
	v, _, _ := unstructured.NestedFieldNoCopy(o.Object, path...)
	data, _ := json.Marshal(v)
	return string(data)
}

// prometheusComponent lets a Prometheus scrape both binaries (deploy/README.md,
// "Metrics").
const prometheusComponent = "deploy/components/prometheus"

// renderOverlay renders an overlay of deploy/default with the given body
// after its resources, written to a directory under bin/ so that it may
// name the repository's directories relatively.
func renderOverlay(t *testing.T, body string) []*unstructured.Unstructured {
	t.Helper()
	root := tools.MustRepoRoot(t)
	if err := os.MkdirAll(filepath.Join(root, "bin"), 0o755); err != nil {
		t.Fatal(err)
	}
	dir, err := os.MkdirTemp(filepath.Join(root, "bin"), "overlay-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(dir) })
	rel := func(p string) string {
		r, err := filepath.Rel(dir, filepath.Join(root, p))
		if err != nil {
			t.Fatal(err)
		}
		return filepath.ToSlash(r)
	}
	overlay := "apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nresources:\n  - " + rel(defaultInstall) +
		"\n" + strings.ReplaceAll(body, "COMPONENT", rel(prometheusComponent))
	if err := os.WriteFile(filepath.Join(dir, "kustomization.yaml"), []byte(overlay), 0o600); err != nil {
		t.Fatal(err)
	}
	relDir, err := filepath.Rel(root, dir)
	if err != nil {
		t.Fatal(err)
	}
	return render(t, relDir)
}

// checkPrometheusNetworkPolicy checks that the component's NetworkPolicy
// admits Prometheus' Pods in promNamespace, and only them, to the metrics
// port of both binaries.
func checkPrometheusNetworkPolicy(t *testing.T, objs []*unstructured.Unstructured, promNamespace string) {
	t.Helper()
	var np networkingv1.NetworkPolicy
	decode(t, one(t, objs, "NetworkPolicy", "kim-snatch-prometheus"), &np)
	if np.Namespace != namespace {
		t.Errorf("NetworkPolicy %s is in %q, want %s", np.Name, np.Namespace, namespace)
	}
	sel, err := metav1.LabelSelectorAsSelector(&np.Spec.PodSelector)
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"snatch-webhook", "cabundle-syncer"} {
		d := deployment(t, objs, name)
		if !sel.Matches(labels.Set(d.Spec.Template.Labels)) {
			t.Errorf("NetworkPolicy %s does not select the Pods of %s", np.Name, name)
		}
		containerPort(t, container(t, d), "metrics")
	}
	if len(np.Spec.Ingress) != 1 || len(np.Spec.Ingress[0].From) != 1 || len(np.Spec.Ingress[0].Ports) != 1 {
		t.Fatalf("NetworkPolicy %s has ingress %+v, want one rule from one peer to one port", np.Name, np.Spec.Ingress)
	}
	rule := np.Spec.Ingress[0]
	if p := rule.Ports[0].Port; p == nil || p.String() != "metrics" {
		t.Errorf("NetworkPolicy %s admits port %v, want metrics only", np.Name, p)
	}
	peer := rule.From[0]
	if peer.NamespaceSelector == nil || !reflect.DeepEqual(peer.NamespaceSelector.MatchLabels, map[string]string{"kubernetes.io/metadata.name": promNamespace}) || len(peer.NamespaceSelector.MatchExpressions) > 0 {
		t.Errorf("NetworkPolicy %s admits namespaces %+v, want exactly %s, the ServiceAccount's", np.Name, peer.NamespaceSelector, promNamespace)
	}
	// What prometheus-operator puts on every Pod of a Prometheus.
	if peer.PodSelector == nil || !reflect.DeepEqual(peer.PodSelector.MatchLabels, map[string]string{"app.kubernetes.io/name": "prometheus"}) {
		t.Errorf("NetworkPolicy %s admits Pods %+v, want app.kubernetes.io/name=prometheus", np.Name, peer.PodSelector)
	}
}

// helmOverride is the patches of deploy/README.md ("The Prometheus
// component") that set the Prometheus of the kube-prometheus-stack Helm
// chart in the namespace observability.
const helmOverride = `
patches:
  - target:
      kind: ClusterRoleBinding|RoleBinding
      name: cabundle-syncer-metrics-reader|kim-snatch-prometheus
    patch: |-
      - op: replace
        path: /subjects/0
        value: {kind: ServiceAccount, name: kube-prometheus-stack-prometheus, namespace: observability}
  - target:
      kind: NetworkPolicy
      name: kim-snatch-prometheus
    patch: |-
      - op: replace
        path: /spec/ingress/0/from/0/namespaceSelector/matchLabels/kubernetes.io~1metadata.name
        value: observability
`

// The component binds the Prometheus ServiceAccount to the syncer's
// metrics-reader ClusterRole and to the Role of its service discovery in
// the installation's namespace, and admits that Prometheus' Pods, in the
// same namespace, to the metrics port of both binaries: by default
// kube-prometheus' prometheus-k8s in monitoring, and whatever an overlay
// sets with the patches of deploy/README.md, which the README holds as
// written here. Nothing else of the installation changes.
func TestPrometheusComponentLetsPrometheusScrapeBothBinaries(t *testing.T) {
	readme, err := os.ReadFile(filepath.Join(tools.MustRepoRoot(t), "deploy", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(readme), strings.TrimSpace(helmOverride)) {
		t.Errorf("deploy/README.md lacks the patches of the test's overlay:%s", helmOverride)
	}
	tests := []struct {
		name, body                string
		serviceAccount, namespace string
	}{
		{name: "kube_prometheus_default_may_scrape", body: "components:\n  - COMPONENT\n", serviceAccount: "prometheus-k8s", namespace: "monitoring"},
		{name: "helm_chart_in_another_namespace_may_scrape", body: "components:\n  - COMPONENT\n" + helmOverride, serviceAccount: "kube-prometheus-stack-prometheus", namespace: "observability"},
	}
	base := render(t, defaultInstall)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			objs := renderOverlay(t, tt.body)
			if len(objs) != len(base)+4 {
				t.Fatalf("the overlay renders %d objects, want the %d of %s and the component's 4", len(objs), len(base), defaultInstall)
			}

			var crb rbacv1.ClusterRoleBinding
			decode(t, one(t, objs, "ClusterRoleBinding", "cabundle-syncer-metrics-reader"), &crb)
			if crb.RoleRef.Kind != "ClusterRole" || len(ofName(objs, "ClusterRole", crb.RoleRef.Name)) != 1 || crb.RoleRef.Name != "cabundle-syncer-metrics-reader" {
				t.Errorf("the binding refers to %s %s, want the installation's ClusterRole cabundle-syncer-metrics-reader", crb.RoleRef.Kind, crb.RoleRef.Name)
			}
			want := []rbacv1.Subject{{Kind: "ServiceAccount", Name: tt.serviceAccount, Namespace: tt.namespace}}
			if !reflect.DeepEqual(crb.Subjects, want) {
				t.Errorf("the binding's subjects are %+v, want %+v", crb.Subjects, want)
			}

			checkDiscoveryRole(t, objs, want)
			checkPrometheusNetworkPolicy(t, objs, tt.namespace)

			for _, b := range base {
				if slices.ContainsFunc(objs, func(o *unstructured.Unstructured) bool { return id(o) == id(b) && nested(o, nil) != nested(b, nil) }) {
					t.Errorf("the component changed %s", id(b))
				}
			}
		})
	}
}

// discoveryRules are what Prometheus service discovery reads of the
// ServiceMonitors' namespace, for each role prometheus-operator may give
// it: read only, and nothing else.
var discoveryRules = []rbacv1.PolicyRule{
	{APIGroups: []string{""}, Resources: []string{"services", "endpoints", "pods"}, Verbs: []string{"get", "list", "watch"}},
	{APIGroups: []string{"discovery.k8s.io"}, Resources: []string{"endpointslices"}, Verbs: []string{"get", "list", "watch"}},
}

// checkDiscoveryRole checks that the component's Role in the installation's
// namespace grants discoveryRules and no more, that its RoleBinding binds
// it to subjects, and that the component adds no other rights: no
// ClusterRole, and of cluster-wide bindings the metrics reader's alone.
func checkDiscoveryRole(t *testing.T, objs []*unstructured.Unstructured, subjects []rbacv1.Subject) {
	t.Helper()
	var role rbacv1.Role
	decode(t, one(t, objs, "Role", "kim-snatch-prometheus"), &role)
	if role.Namespace != namespace || !reflect.DeepEqual(role.Rules, discoveryRules) {
		t.Errorf("Role %s/%s grants %+v, want %+v in %s", role.Namespace, role.Name, role.Rules, discoveryRules, namespace)
	}
	var rb rbacv1.RoleBinding
	decode(t, one(t, objs, "RoleBinding", "kim-snatch-prometheus"), &rb)
	if rb.Namespace != namespace || rb.RoleRef != (rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: role.Name}) {
		t.Errorf("RoleBinding %s/%s refers to %+v, want the Role %s in %s", rb.Namespace, rb.Name, rb.RoleRef, role.Name, namespace)
	}
	if !reflect.DeepEqual(rb.Subjects, subjects) {
		t.Errorf("RoleBinding %s binds %+v, want %+v, the ClusterRoleBinding's", rb.Name, rb.Subjects, subjects)
	}
	base := render(t, defaultInstall)
	for _, kind := range []string{"ClusterRole", "ClusterRoleBinding"} {
		for _, o := range objects.OfKind(objs, kind) {
			added := !slices.ContainsFunc(base, func(b *unstructured.Unstructured) bool { return id(b) == id(o) })
			if added && (kind == "ClusterRole" || o.GetName() != "cabundle-syncer-metrics-reader") {
				t.Errorf("the component adds %s, a cluster-wide right", id(o))
			}
		}
	}
}

// one returns the only object of kind and name.
func one(t *testing.T, objs []*unstructured.Unstructured, kind, name string) *unstructured.Unstructured {
	t.Helper()
	found := ofName(objs, kind, name)
	if len(found) != 1 {
		t.Fatalf("%d %s objects named %s, want 1", len(found), kind, name)
	}
	return found[0]
}

func ofName(objs []*unstructured.Unstructured, kind, name string) []*unstructured.Unstructured {
	var out []*unstructured.Unstructured
	for _, o := range objects.OfKind(objs, kind) {
		if o.GetName() == name {
			out = append(out, o)
		}
	}
	return out
}

// decode converts o into the typed object into.
func decode(t *testing.T, o *unstructured.Unstructured, into any) {
	t.Helper()
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(o.Object, into); err != nil {
		t.Fatalf("%s: %v", id(o), err)
	}
}

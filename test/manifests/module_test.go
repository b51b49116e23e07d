package manifests

import (
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/kyma-project/kim-snatch/test/framework/objects"
	"github.com/kyma-project/kim-snatch/test/supplychain"
)

// hack/release/release.sh --module, run in a clone on two signed binary releases,
// writes the module as lifecycle-manager needs it: one manifest with both
// binaries, the webhook's Deployment first, each object the one of its
// binary's install.yaml with its binary's version, nothing a plain runtime
// has no CRD for, and the ServiceMonitors and PrometheusRules apart in
// monitoring.yaml. A later module version that changes one binary changes
// only that binary's objects.
func TestModuleReleaseHoldsBothBinariesForLifecycleManager(t *testing.T) {
	r := newReleaser(t)
	r.binaryRelease(t, "snatch-webhook", "v0.2.0", "sha256:"+strings.Repeat("ab", 32))
	r.binaryRelease(t, "cabundle-syncer", "v0.1.0", "")
	m := r.releaseModule(t, "2.0.0", "v0.2.0", "v0.1.0")
	for _, c := range []struct {
		name  string
		check func(*testing.T, *moduleRelease)
	}{
		{"module_holds_both_binaries_without_monitoring", checkModuleHoldsBothBinaries},
		{"webhook_deployment_comes_first", checkWebhookDeploymentFirst},
		{"every_object_carries_its_binarys_version", checkVersionMarks},
		{"monitoring_holds_exactly_the_servicemonitors_and_prometheusrules", checkMonitoringSplit},
		{"objects_are_those_of_the_install_files", checkObjectsOfInstallFiles},
		{"servicemonitors_select_the_metrics_services_as_lifecycle_manager_labels_them",
			checkServiceMonitorsUnderLifecycleManager},
	} {
		t.Run(c.name, func(t *testing.T) { c.check(t, m) })
	}
	t.Run("sums_list_both_files_and_verify_with_the_trusted_key", func(t *testing.T) {
		assertReleaseSums(t, m.dir, []string{"module.yaml", "monitoring.yaml"})
		assertBlobSignatures(t, m.dir, filepath.Join(r.repo, supplychain.TrustedKeyFile), []string{"SHA256SUMS"})
	})

	r.binaryRelease(t, "snatch-webhook", "v0.3.0", "sha256:"+strings.Repeat("cd", 32))
	next := r.releaseModule(t, "2.1.0", "v0.3.0", "v0.1.0")
	t.Run("upgrading_the_webhook_alone_changes_only_its_objects", func(t *testing.T) {
		checkOneBinaryUpgrade(t, m, next)
	})

	rt := startPlainRuntime(t)
	t.Run("no_object_is_of_a_group_a_plain_runtime_lacks", func(t *testing.T) { checkGroupsServed(t, rt, m.module) })
	t.Run("module_applies_to_a_runtime_without_prometheus_operator", func(t *testing.T) {
		checkAppliesToPlainRuntime(t, rt, m)
	})
}

// checkModuleHoldsBothBinaries holds module.yaml to the objects of both
// install files but the monitoring ones, and to both Deployments.
func checkModuleHoldsBothBinaries(t *testing.T, m *moduleRelease) {
	var want []*unstructured.Unstructured
	for _, b := range moduleBinaries {
		want = append(want, without(m.install[b], isMonitoring)...)
		find(t, m.module, "Deployment", b)
	}
	if got, want := ids(m.module), ids(want); !slices.Equal(got, want) {
		t.Errorf("module.yaml holds\n  %v\nwant the install files' objects without monitoring\n  %v", got, want)
	}
}

// checkWebhookDeploymentFirst: lifecycle-manager reads the state of a
// module from the first Deployment or StatefulSet of its manifest (its
// ManagerStateCheck), and the webhook's is the one that tells.
func checkWebhookDeploymentFirst(t *testing.T, m *moduleRelease) {
	for _, o := range m.module {
		gvk := o.GroupVersionKind()
		if gvk.Group != "apps" || (gvk.Kind != "Deployment" && gvk.Kind != "StatefulSet") {
			continue
		}
		if gvk.Kind != "Deployment" || o.GetName() != "snatch-webhook" {
			t.Fatalf("the first Deployment or StatefulSet of module.yaml is %s; want Deployment snatch-webhook", id(o))
		}
		return
	}
	t.Fatal("module.yaml has no Deployment")
}

// checkVersionMarks checks each object of both files for its binary's
// version, on it and on its Pod templates, and for the module's version on
// it but not on its Pod templates, whose change would restart the Pods.
func checkVersionMarks(t *testing.T, m *moduleRelease) {
	for _, o := range append(slices.Clone(m.module), m.monitoring...) {
		want := m.versions[m.binaryOf[id(o)]]
		if got := o.GetLabels()[versionLabel]; want == "" || got != want {
			t.Errorf("%s has %s=%q, want %q, its binary's version", id(o), versionLabel, got, want)
		}
		if got := o.GetAnnotations()[moduleAnnotation]; got != m.version {
			t.Errorf("%s has %s=%q, want %q", id(o), moduleAnnotation, got, m.version)
		}
		for _, p := range templateMeta {
			tmpl, ok, _ := unstructured.NestedStringMap(o.Object, at(p, "labels")...)
			if ok && tmpl[versionLabel] != want {
				t.Errorf("%s: its template %v is labelled %s=%q, want %q", id(o), p, versionLabel, tmpl[versionLabel], want)
			}
			annotations, _, _ := unstructured.NestedStringMap(o.Object, at(p, "annotations")...)
			if _, ok := annotations[moduleAnnotation]; ok {
				t.Errorf("%s: its template %v carries %s: a module version would restart every binary", id(o), p, moduleAnnotation)
			}
		}
	}
}

// checkMonitoringSplit holds monitoring.yaml to the ServiceMonitors and
// PrometheusRules of both install files, and nothing else.
func checkMonitoringSplit(t *testing.T, m *moduleRelease) {
	var want []*unstructured.Unstructured
	for _, b := range moduleBinaries {
		want = append(want, without(m.install[b], func(o *unstructured.Unstructured) bool { return !isMonitoring(o) })...)
	}
	kinds := map[string]bool{}
	for _, o := range m.monitoring {
		kinds[o.GetKind()] = true
	}
	if !reflect.DeepEqual(kinds, map[string]bool{"ServiceMonitor": true, "PrometheusRule": true}) {
		t.Errorf("monitoring.yaml holds the kinds %v, want ServiceMonitor and PrometheusRule", kinds)
	}
	if got, want := ids(m.monitoring), ids(want); !slices.Equal(got, want) {
		t.Errorf("monitoring.yaml holds\n  %v\nwant the install files' ServiceMonitors and PrometheusRules\n  %v", got, want)
	}
}

// checkObjectsOfInstallFiles holds every object of both files to its
// install.yaml's, but for the version marks and the ServiceMonitors'
// selector, which checkServiceMonitorsUnderLifecycleManager holds.
func checkObjectsOfInstallFiles(t *testing.T, m *moduleRelease) {
	installed := map[string]*unstructured.Unstructured{}
	for _, b := range moduleBinaries {
		for _, o := range m.install[b] {
			installed[id(o)] = o
		}
	}
	for _, o := range append(slices.Clone(m.module), m.monitoring...) {
		want := installed[id(o)].DeepCopy()
		if o.GetKind() == "ServiceMonitor" {
			deleteKey(want, "app.kubernetes.io/component", "spec", "selector", "matchLabels")
		}
		if got := unmarked(o); !reflect.DeepEqual(got.Object, want.Object) {
			t.Errorf("%s differs from its install.yaml's beyond the version marks:\n got %v\nwant %v",
				id(o), got.Object, want.Object)
		}
	}
}

// lifecycleManagerLabels sets on o what lifecycle-manager 1.20 sets on every
// object it applies (render.KymaComponentTransform): the component, its
// Manifest's name, and part-of Kyma.
func lifecycleManagerLabels(o *unstructured.Unstructured) {
	l := o.GetLabels()
	if l == nil {
		l = map[string]string{}
	}
	l["app.kubernetes.io/component"] = "kyma-kim-snatch-manifest"
	l["app.kubernetes.io/part-of"] = "Kyma"
	o.SetLabels(l)
}

// checkServiceMonitorsUnderLifecycleManager checks that each ServiceMonitor
// of monitoring.yaml scrapes its binary's metrics Service as
// lifecycle-manager labels the Services, and that the install file's
// selector, which names the component, would scrape nothing there.
func checkServiceMonitorsUnderLifecycleManager(t *testing.T, m *moduleRelease) {
	var services []*unstructured.Unstructured
	for _, s := range objects.OfKind(m.module, "Service") {
		s = s.DeepCopy()
		lifecycleManagerLabels(s)
		services = append(services, s)
	}
	for _, sm := range objects.OfKind(m.monitoring, "ServiceMonitor") {
		binary := m.binaryOf[id(sm)]
		if got := scrapedServices(t, sm, services); !slices.Equal(got, []string{binary + "-metrics"}) {
			t.Errorf("ServiceMonitor %s scrapes the Services %v, want %s-metrics alone", sm.GetName(), got, binary)
		}
		shipped := find(t, m.install[binary], "ServiceMonitor", sm.GetName())
		if got := scrapedServices(t, shipped, services); len(got) != 0 {
			t.Errorf("install.yaml's ServiceMonitor %s scrapes %v under lifecycle-manager's labels;"+
				" the check above proves nothing", sm.GetName(), got)
		}
	}
}

// serviceMonitorSpec is what prometheus-operator reads of a ServiceMonitor
// to find its targets: the Services it selects, and their ports it
// scrapes.
type serviceMonitorSpec struct {
	Selector  metav1.LabelSelector `json:"selector"`
	Endpoints []struct {
		Port string `json:"port"`
	} `json:"endpoints"`
}

// scrapedServices returns the Services of services, in sm's namespace, that
// sm selects and that have the port of one of its endpoints: those
// prometheus-operator makes targets of.
func scrapedServices(t *testing.T, sm *unstructured.Unstructured, services []*unstructured.Unstructured) []string {
	var spec serviceMonitorSpec
	m, _, _ := unstructured.NestedMap(sm.Object, "spec")
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(m, &spec); err != nil {
		t.Fatalf("%s: %v", id(sm), err)
	}
	sel, err := metav1.LabelSelectorAsSelector(&spec.Selector)
	if err != nil {
		t.Fatalf("%s: %v", id(sm), err)
	}
	ports := map[string]bool{}
	for _, e := range spec.Endpoints {
		ports[e.Port] = true
	}
	var out []string
	for _, o := range services {
		var s corev1.Service
		typed(t, o, &s)
		scraped := slices.ContainsFunc(s.Spec.Ports, func(p corev1.ServicePort) bool { return ports[p.Name] })
		if s.Namespace == sm.GetNamespace() && sel.Matches(labels.Set(s.Labels)) && scraped {
			out = append(out, s.Name)
		}
	}
	return out
}

// checkOneBinaryUpgrade holds the module version next, which changes only
// the webhook's version, to prev: the syncer's objects stay as they were
// but for the module annotation, which is not on their Pod templates, so
// that its Pods do not restart; the webhook's are those of its new release.
func checkOneBinaryUpgrade(t *testing.T, prev, next *moduleRelease) {
	before := map[string]*unstructured.Unstructured{}
	for _, o := range append(slices.Clone(prev.module), prev.monitoring...) {
		before[id(o)] = o
	}
	for _, o := range append(slices.Clone(next.module), next.monitoring...) {
		old, ok := before[id(o)]
		if next.binaryOf[id(o)] != "cabundle-syncer" || !ok {
			continue
		}
		delete(before, id(o))
		got, want := withoutAnnotation(o, moduleAnnotation), withoutAnnotation(old, moduleAnnotation)
		if !reflect.DeepEqual(got.Object, want.Object) {
			t.Errorf("%s changes with the webhook's version:\n%s %v\n%s %v",
				id(o), prev.version, want.Object, next.version, got.Object)
		}
	}
	for left := range before {
		if prev.binaryOf[left] == "cabundle-syncer" {
			t.Errorf("%s of %s is missing from %s", left, prev.version, next.version)
		}
	}
	checkObjectsOfInstallFiles(t, next)
	image := func(m *moduleRelease) []string {
		return imageRefs([]*unstructured.Unstructured{find(t, m.module, "Deployment", "snatch-webhook")})
	}
	if got := image(next); slices.Equal(got, image(prev)) {
		t.Errorf("%s runs the webhook's image %v of %s", next.version, got, prev.version)
	}
}

// withoutAnnotation returns a copy of o without the annotation key.
func withoutAnnotation(o *unstructured.Unstructured, key string) *unstructured.Unstructured {
	c := o.DeepCopy()
	deleteKey(c, key, "metadata", "annotations")
	return c
}

package manifests

import (
	"maps"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/prometheus/common/model"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"github.com/kyma-project/kim-snatch/test/framework/objects"
	"github.com/kyma-project/kim-snatch/test/tools"
)

// The kind path of the end-to-end suite (hack/e2e/e2e-kind.sh).
const (
	kindOverlay = "test/e2e/overlay"
	kindConfig  = "test/e2e/kind/kind-config.yaml"
)

// The overlay is deploy/default unmodified: every object that ships, beside
// the kyma-system Namespace, Kyma's deny-all and the two components
// docs/operations.md tells users to add for their Prometheus. Nothing of
// deploy/default is dropped, and its neighbours (test/e2e/neighbours) are
// installed, not stood in for. Its changes are test-only: see
// TestE2EOverlayShortensOnlyTheForOfAlerts and
// TestE2EOverlayShortensOnlyTheScrapeIntervalOfServiceMonitors.
func TestE2EOverlayIsTheDefaultInstallUnmodified(t *testing.T) {
	objs := render(t, kindOverlay)
	want := append(ids(render(t, defaultInstall)),
		"Namespace/"+namespace,
		"NetworkPolicy.networking.k8s.io/kyma-system/kyma-project.io--deny-all",
		"ClusterRoleBinding.rbac.authorization.k8s.io/cabundle-syncer-metrics-reader",
		"NetworkPolicy.networking.k8s.io/kyma-system/kim-snatch-prometheus",
		"Role.rbac.authorization.k8s.io/kyma-system/kim-snatch-prometheus",
		"RoleBinding.rbac.authorization.k8s.io/kyma-system/kim-snatch-prometheus",
		"PrometheusRule.monitoring.coreos.com/kyma-system/kim-snatch-fleet",
		// The API server scraped profile's record, for the suite's
		// Prometheus of that profile (test/e2e/overlay/apiserver-profile).
		"PrometheusRule.monitoring.coreos.com/kyma-system/kim-snatch-monitoring-profile-apiserver",
	)
	want = slices.Sorted(slices.Values(want))
	if got := ids(objs); !slices.Equal(got, want) {
		t.Fatalf("%s renders\n  %v\nwant\n  %v", kindOverlay, got, want)
	}

	images := map[string]string{}
	for _, d := range objects.OfKind(objs, "Deployment") {
		for _, c := range containers(t, d) {
			images[d.GetName()] = c
		}
	}
	wantImages := map[string]string{"snatch-webhook": "snatch-webhook:e2e", "cabundle-syncer": "cabundle-syncer:e2e"}
	if !maps.Equal(images, wantImages) {
		t.Errorf("images %v, want the ones hack/e2e/e2e-kind.sh loads: %v", images, wantImages)
	}

	ns := objects.OfKind(objs, "Namespace")[0]
	for k, v := range map[string]string{managedByLabel: "kyma", "pod-security.kubernetes.io/enforce": "restricted"} {
		if got := ns.GetLabels()[k]; got != v {
			t.Errorf("Namespace %s has %s=%q, want %q", ns.GetName(), k, got, v)
		}
	}
}

// The overlay's one change to the shipped rules is test-only: the `for` of
// the alerts its patches name (test/e2e/overlay/shorter-for-*.yaml) is
// shorter, and every other field of every rule is as shipped.
func TestE2EOverlayShortensOnlyTheForOfAlerts(t *testing.T) {
	shipped := map[string]*unstructured.Unstructured{}
	for _, r := range objects.OfKind(render(t, defaultInstall), "PrometheusRule") {
		shipped[r.GetName()] = r
	}
	var shortened []string
	for _, r := range objects.OfKind(render(t, kindOverlay), "PrometheusRule") {
		want, ok := shipped[r.GetName()]
		if !ok {
			continue // a component's, compared by its own tests
		}
		got := r.DeepCopy()
		gotRules, wantRules := rulesByName(t, got), rulesByName(t, want.DeepCopy())
		for name, g := range gotRules {
			w := wantRules[name]
			if g["for"] == w["for"] {
				continue
			}
			gf, wf := forOf(t, name, g), forOf(t, name, w)
			if gf >= wf {
				t.Errorf("%s: the overlay's for %s is not shorter than the shipped %s", name, gf, wf)
			}
			shortened = append(shortened, name)
			delete(g, "for")
			delete(w, "for")
		}
		if !reflect.DeepEqual(gotRules, wantRules) {
			t.Errorf("PrometheusRule %s: the overlay changes more than the alerts' for", r.GetName())
		}
	}
	if len(shortened) == 0 {
		t.Error("the overlay shortens no alert's for; its patches name alerts that no longer exist")
	}
	t.Logf("the overlay shortens the for of %v", shortened)
}

// rulesByName returns every rule of a PrometheusRule by its alert or record
// name, as the objects inside o.
func rulesByName(t *testing.T, o *unstructured.Unstructured) map[string]map[string]any {
	t.Helper()
	out := map[string]map[string]any{}
	groups, _, _ := unstructured.NestedSlice(o.Object, "spec", "groups")
	for _, g := range groups {
		rules, _, _ := unstructured.NestedSlice(g.(map[string]any), "rules")
		for _, r := range rules {
			rule := r.(map[string]any)
			name, _ := rule["alert"].(string)
			if name == "" {
				name, _ = rule["record"].(string)
			}
			out[name] = rule
		}
	}
	return out
}

// forOf parses an alert rule's for.
func forOf(t *testing.T, name string, rule map[string]any) time.Duration {
	t.Helper()
	return durationOf(t, name, rule["for"])
}

// durationOf parses v, a Prometheus duration of the object name.
func durationOf(t *testing.T, name string, v any) time.Duration {
	t.Helper()
	s, _ := v.(string)
	d, err := model.ParseDuration(s)
	if err != nil {
		t.Fatalf("%s: duration %q: %v", name, s, err)
	}
	return time.Duration(d)
}

// The overlay's one change to the shipped ServiceMonitors is test-only
// (test/e2e/overlay/shorter-scrape.yaml): each scrapes more often, within a
// timeout no longer than its interval, and every other field is as shipped.
func TestE2EOverlayShortensOnlyTheScrapeIntervalOfServiceMonitors(t *testing.T) {
	shipped := map[string]*unstructured.Unstructured{}
	for _, m := range objects.OfKind(render(t, defaultInstall), "ServiceMonitor") {
		shipped[m.GetName()] = m
	}
	got := objects.OfKind(render(t, kindOverlay), "ServiceMonitor")
	if len(got) != len(shipped) || len(got) == 0 {
		t.Fatalf("the overlay renders %d ServiceMonitors, deploy/default %d", len(got), len(shipped))
	}
	for _, m := range got {
		want, ok := shipped[m.GetName()]
		if !ok {
			t.Fatalf("ServiceMonitor %s is not shipped", m.GetName())
		}
		gm, wm := m.DeepCopy(), want.DeepCopy()
		g, w := firstEndpoint(t, gm), firstEndpoint(t, wm)
		gi, wi := durationOf(t, m.GetName(), g["interval"]), durationOf(t, m.GetName(), w["interval"])
		if gi >= wi {
			t.Errorf("ServiceMonitor %s: the overlay's interval %s is not shorter than the shipped %s", m.GetName(), gi, wi)
		}
		if gt := durationOf(t, m.GetName(), g["scrapeTimeout"]); gt > gi {
			t.Errorf("ServiceMonitor %s: scrapeTimeout %s exceeds the interval %s", m.GetName(), gt, gi)
		}
		for _, e := range []map[string]any{g, w} {
			delete(e, "interval")
			delete(e, "scrapeTimeout")
		}
		if !reflect.DeepEqual(gm.Object["spec"], wm.Object["spec"]) {
			t.Errorf("ServiceMonitor %s: the overlay changes more than the interval and timeout", m.GetName())
		}
	}
}

// firstEndpoint returns the first endpoint of ServiceMonitor m, in m.
func firstEndpoint(t *testing.T, m *unstructured.Unstructured) map[string]any {
	t.Helper()
	eps, _, _ := unstructured.NestedSlice(m.Object, "spec", "endpoints")
	if len(eps) != 1 {
		t.Fatalf("ServiceMonitor %s has %d endpoints, want 1", m.GetName(), len(eps))
	}
	ep := eps[0].(map[string]any)
	m.Object["spec"].(map[string]any)["endpoints"] = []any{ep}
	return ep
}

// Every object of the overlay is accepted by the real API server, with
// kyma-system enforcing the restricted profile as the overlay sets it.
func TestAPIServerAcceptsTheKindOverlay(t *testing.T) {
	env := apiServer(t)
	env.warnings.take()
	for _, o := range render(t, kindOverlay) {
		// The Namespace for real, so that the rest can be tried in it.
		if err := env.apply(t.Context(), o, o.GetKind() != "Namespace"); err != nil {
			t.Errorf("%s: %v", id(o), err)
		}
		if w := env.warnings.take(); len(w) > 0 {
			t.Errorf("%s: the API server warns: %q", id(o), w)
		}
	}
}

// The suite's scenarios need both pools. Filling the Kyma pool puts one
// large Pod on each Kyma node and two on the customer pool, which takes
// two customer nodes.
func TestKindConfigHasBothPools(t *testing.T) {
	data, err := os.ReadFile(filepath.Join(tools.MustRepoRoot(t), kindConfig))
	if err != nil {
		t.Fatal(err)
	}
	var cfg struct {
		APIVersion string `json:"apiVersion"`
		Kind       string `json:"kind"`
		Name       string `json:"name"`
		Nodes      []struct {
			Role   string            `json:"role"`
			Labels map[string]string `json:"labels"`
		} `json:"nodes"`
	}
	if err := yaml.UnmarshalStrict(data, &cfg); err != nil {
		t.Fatalf("%s: %v", kindConfig, err)
	}
	pools := map[string]int{}
	for _, n := range cfg.Nodes {
		if n.Role == "worker" {
			pools[n.Labels["worker.gardener.cloud/pool"]]++
		}
	}
	if cfg.Kind != "Cluster" || pools["cpu-worker-0"] < 1 || pools["customer-pool"] < 2 || len(pools) != 2 {
		t.Errorf("%s: kind %q with workers per pool %v; want a Cluster with at least 1 cpu-worker-0 and 2 customer-pool workers, and no unlabelled worker", kindConfig, cfg.Kind, pools)
	}
}

// containers returns the images of a Deployment's containers.
func containers(t *testing.T, d *unstructured.Unstructured) []string {
	t.Helper()
	cs, _, err := unstructured.NestedSlice(d.Object, "spec", "template", "spec", "containers")
	if err != nil {
		t.Fatalf("%s: %v", id(d), err)
	}
	var images []string
	for _, c := range cs {
		if m, ok := c.(map[string]any); ok {
			img, _ := m["image"].(string)
			images = append(images, img)
		}
	}
	return images
}

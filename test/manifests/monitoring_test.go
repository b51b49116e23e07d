package manifests

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
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

// The overlay of docs/operations.md sets the monitoring objects' labels
// without touching any selector of the installation.
func TestOverlaySetsMonitoringLabels(t *testing.T) {
	root := repoRoot(t)
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
	if n != 4 {
		t.Errorf("the overlay renders %d ServiceMonitors and PrometheusRules, want 4", n)
	}
}

// nested returns the field at path, encoded for comparison.
func nested(o *unstructured.Unstructured, path []string) string {
	v, _, _ := unstructured.NestedFieldNoCopy(o.Object, path...)
	data, _ := json.Marshal(v)
	return string(data)
}

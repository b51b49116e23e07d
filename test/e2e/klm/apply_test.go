package klm_test

import (
	"encoding/json"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"

	"github.com/kyma-project/kim-snatch/test/e2e/klm"
)

// otherManager applies a field before the stand-in does.
const otherManager = "other-deployer"

// The apply is forced: a field another manager owns becomes the
// stand-in's, and the other manager's other fields stay as they are.
func applyTakesOwnership(t *testing.T, e *env) {
	f := e.start(t, fast())
	cms := f.cs.CoreV1().ConfigMaps(f.skr)
	_, err := cms.Apply(t.Context(), corev1ac.ConfigMap("shared", f.skr).
		WithData(map[string]string{"owner": "other", "extra": "kept"}), metav1.ApplyOptions{FieldManager: otherManager})
	must(t, err)
	// Without force the stand-in's apply of the field would conflict.
	_, err = cms.Apply(t.Context(), corev1ac.ConfigMap("shared", f.skr).WithData(map[string]string{"owner": "klm"}),
		metav1.ApplyOptions{FieldManager: klm.FieldManager, DryRun: []string{metav1.DryRunAll}})
	if !apierrors.IsConflict(err) {
		t.Fatalf("an unforced apply of data.owner: %v, want a conflict", err)
	}
	f.publish("1", configMap(f.skr, "shared", map[string]string{"owner": "klm"}))
	f.create("1", nil)
	f.waitReady("1")
	cm, err := cms.Get(t.Context(), "shared", metav1.GetOptions{})
	must(t, err)
	if cm.Data["owner"] != "klm" || cm.Data["extra"] != "kept" {
		t.Errorf("data = %v, want owner=klm from the layer and extra=kept from %s", cm.Data, otherManager)
	}
	owners := fieldOwners(t, cm.ManagedFields, "f:data", "f:owner")
	if owners[klm.FieldManager] != metav1.ManagedFieldsOperationApply || len(owners) != 1 {
		t.Errorf("data.owner is owned by %v, want %s alone, by Apply", owners, klm.FieldManager)
	}
}

// fieldOwners returns the managers whose fields hold path, with the
// operation of each.
func fieldOwners(t *testing.T, entries []metav1.ManagedFieldsEntry,
	path ...string,
) map[string]metav1.ManagedFieldsOperationType {
	t.Helper()
	out := map[string]metav1.ManagedFieldsOperationType{}
	for _, e := range entries {
		var fields map[string]any
		if e.FieldsV1 == nil {
			continue
		}
		must(t, json.Unmarshal(e.FieldsV1.GetRawBytes(), &fields))
		node := any(fields)
		for _, p := range path {
			m, _ := node.(map[string]any)
			node = m[p]
		}
		if node != nil {
			out[e.Manager] = e.Operation
		}
	}
	return out
}

// Every applied object carries the managed-by, component and part-of
// labels, the owned-by and disclaimer annotations, and keeps its own.
func labelsMarkEveryObject(t *testing.T, e *env) {
	f := e.start(t, fast())
	f.publish("1", configMap(f.skr, "cm", nil), service(f.skr, "svc"))
	f.create("1", nil)
	f.waitReady("1")
	wantLabels := map[string]string{
		klm.ManagedByLabel: klm.ManagedByValue, klm.ComponentLabel: f.key.Name, klm.PartOfLabel: klm.PartOfValue,
		"layer": "label",
	}
	wantAnnotations := map[string]string{
		klm.OwnedByAnnotation: f.key.String(), klm.DisclaimerAnnotation: klm.DisclaimerValue,
	}
	for _, o := range []struct {
		gvr  schema.GroupVersionResource
		name string
	}{{configMaps, "cm"}, {services, "svc"}} {
		u := f.get(o.gvr, f.skr, o.name)
		for k, v := range wantLabels {
			if u.GetLabels()[k] != v {
				t.Errorf("%s %s: label %s=%q, want %q", o.gvr.Resource, o.name, k, u.GetLabels()[k], v)
			}
		}
		for k, v := range wantAnnotations {
			if u.GetAnnotations()[k] != v {
				t.Errorf("%s %s: annotation %s=%q, want %q", o.gvr.Resource, o.name, k, u.GetAnnotations()[k], v)
			}
		}
	}
}

// A localized image replaces the image of the same name and tag, in a
// container and an init container alike, and no other.
func localizedImagesReplace(t *testing.T, e *env) {
	f := e.start(t, fast())
	const (
		shipped = "europe-docker.pkg.dev/kyma-project/prod/snatch-webhook:1.0.0"
		mirror  = "mirror.example.org/kyma/snatch-webhook:1.0.0"
		other   = "europe-docker.pkg.dev/kyma-project/prod/busybox:1.36"
	)
	f.publish("1", deployment(f.skr, "main", shipped, other), deployment(f.skr, "init", other, shipped))
	f.create("1", nil, func(s *klm.ManifestSpec) { s.LocalizedImages = []string{mirror} })
	want := map[string][2]string{"main": {mirror, other}, "init": {other, mirror}}
	for name, images := range want {
		f.waitObject(deployments, name)
		d, err := f.cs.AppsV1().Deployments(f.skr).Get(t.Context(), name, metav1.GetOptions{})
		must(t, err)
		pod := d.Spec.Template.Spec
		if got := [2]string{pod.Containers[0].Image, pod.InitContainers[0].Image}; got != images {
			t.Errorf("Deployment %s: images (container, init container) = %v, want %v", name, got, images)
		}
	}
}

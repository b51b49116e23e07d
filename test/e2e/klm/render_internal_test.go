package klm

import (
	"maps"
	"slices"
	"testing"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

func names(objs []*unstructured.Unstructured) []string {
	var out []string
	for _, o := range objs {
		out = append(out, o.GetKind()+"/"+o.GetName())
	}
	return out
}

func TestParse(t *testing.T) {
	for _, tc := range []struct {
		name, raw string
		want      []string
	}{
		{"documents_parsed_in_order", "kind: ConfigMap\napiVersion: v1\nmetadata: {name: b}\n---\n" +
			"kind: Service\napiVersion: v1\nmetadata: {name: a}\n", []string{"ConfigMap/b", "Service/a"}},
		{"empty_documents_skipped", "---\n---\nkind: ConfigMap\napiVersion: v1\nmetadata: {name: a}\n---\n",
			[]string{"ConfigMap/a"}},
		{"list_flattened", "kind: List\napiVersion: v1\nitems:\n- {kind: ConfigMap, apiVersion: v1, metadata: {name: a}}\n" +
			"- {kind: Secret, apiVersion: v1, metadata: {name: b}}\n", []string{"ConfigMap/a", "Secret/b"}},
		{"duplicate_keeps_the_first", "kind: ConfigMap\napiVersion: v1\nmetadata: {name: a}\ndata: {v: first}\n---\n" +
			"kind: ConfigMap\napiVersion: v1\nmetadata: {name: a}\ndata: {v: second}\n", []string{"ConfigMap/a"}},
		{"other_api_version_is_another_object", "kind: HorizontalPodAutoscaler\napiVersion: autoscaling/v1\n" +
			"metadata: {name: a}\n---\nkind: HorizontalPodAutoscaler\napiVersion: autoscaling/v2\nmetadata: {name: a}\n",
			[]string{"HorizontalPodAutoscaler/a", "HorizontalPodAutoscaler/a"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			objs, err := Parse([]byte(tc.raw))
			if err != nil {
				t.Fatal(err)
			}
			if got := names(objs); !slices.Equal(got, tc.want) {
				t.Errorf("objects = %v, want %v", got, tc.want)
			}
		})
	}
}

func TestParseKeepsTheFirstOfDuplicates(t *testing.T) {
	objs, err := Parse([]byte("kind: ConfigMap\napiVersion: v1\nmetadata: {name: a}\ndata: {v: first}\n---\n" +
		"kind: ConfigMap\napiVersion: v1\nmetadata: {name: a}\ndata: {v: second}\n"))
	if err != nil {
		t.Fatal(err)
	}
	if v, _, _ := unstructured.NestedString(objs[0].Object, "data", "v"); len(objs) != 1 || v != "first" {
		t.Errorf("kept %d objects, the first with v=%q; want the first alone", len(objs), v)
	}
}

func TestParseRejectsAnObjectWithoutKind(t *testing.T) {
	if _, err := Parse([]byte("apiVersion: v1\nmetadata: {name: a}\n")); err == nil {
		t.Error("an object without kind parsed")
	}
}

func TestTransformAddsKLMsLabelsAndAnnotations(t *testing.T) {
	m := &Manifest{ObjectMeta: metav1.ObjectMeta{Namespace: "kcp-system", Name: "kyma-snatch"}}
	obj := &unstructured.Unstructured{}
	obj.SetLabels(map[string]string{"own": "kept", ComponentLabel: "overwritten", ManagedByLabel: "someone"})
	obj.SetAnnotations(map[string]string{"note": "kept"})
	if err := transform(m, []*unstructured.Unstructured{obj}); err != nil {
		t.Fatal(err)
	}
	wantLabels := map[string]string{"own": "kept", ManagedByLabel: ManagedByValue, ComponentLabel: "kyma-snatch",
		PartOfLabel: PartOfValue}
	if !maps.Equal(obj.GetLabels(), wantLabels) {
		t.Errorf("labels = %v, want %v", obj.GetLabels(), wantLabels)
	}
	wantAnnotations := map[string]string{"note": "kept", OwnedByAnnotation: "kcp-system/kyma-snatch",
		DisclaimerAnnotation: DisclaimerValue}
	if !maps.Equal(obj.GetAnnotations(), wantAnnotations) {
		t.Errorf("annotations = %v, want %v", obj.GetAnnotations(), wantAnnotations)
	}
}

// scopes answers namespacedFunc for ConfigMaps (namespaced) and
// ClusterRoles (cluster-scoped), and no match for anything else.
func scopes(gvk schema.GroupVersionKind) (bool, error) {
	switch gvk.Kind {
	case "ConfigMap":
		return true, nil
	case "ClusterRole":
		return false, nil
	}
	return false, &meta.NoKindMatchError{GroupKind: gvk.GroupKind()}
}

func TestNormaliseNamespaces(t *testing.T) {
	for _, tc := range []struct {
		name, kind, ns, want string
	}{
		{"namespaced_without_one_gets_default", "ConfigMap", "", DefaultNamespace},
		{"namespaced_keeps_its_own", "ConfigMap", "kyma-system", "kyma-system"},
		{"cluster_scoped_loses_it", "ClusterRole", "kyma-system", ""},
		{"unknown_kind_left_as_it_is", "Certificate", "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			obj := &unstructured.Unstructured{}
			obj.SetKind(tc.kind)
			obj.SetNamespace(tc.ns)
			if err := normaliseNamespaces([]*unstructured.Unstructured{obj}, scopes); err != nil {
				t.Fatal(err)
			}
			if obj.GetNamespace() != tc.want {
				t.Errorf("namespace = %q, want %q", obj.GetNamespace(), tc.want)
			}
		})
	}
}

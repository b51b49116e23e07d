package klm

import (
	"slices"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

func obj(apiVersion, kind, ns, name string) *unstructured.Unstructured {
	u := &unstructured.Unstructured{}
	u.SetAPIVersion(apiVersion)
	u.SetKind(kind)
	u.SetNamespace(ns)
	u.SetName(name)
	return u
}

func TestPruneSet(t *testing.T) {
	cm := Resource{Version: "v1", Kind: "ConfigMap", Namespace: "ns", Name: "a"}
	hpaV1 := Resource{Group: "autoscaling", Version: "v1", Kind: "HorizontalPodAutoscaler", Namespace: "ns", Name: "h"}
	remote := Resource{Version: "v1", Kind: "Namespace", Name: RemoteNamespace}
	other := Resource{Version: "v1", Kind: "Namespace", Name: "other"}
	for _, tc := range []struct {
		name   string
		synced []Resource
		target []*unstructured.Unstructured
		want   []Resource
	}{
		{"object_still_in_the_layer_kept", []Resource{cm},
			[]*unstructured.Unstructured{obj("v1", "ConfigMap", "ns", "a")}, nil},
		{"dropped_object_pruned", []Resource{cm}, nil, []Resource{cm}},
		{"changed_api_version_pruned", []Resource{hpaV1},
			[]*unstructured.Unstructured{obj("autoscaling/v2", "HorizontalPodAutoscaler", "ns", "h")}, []Resource{hpaV1}},
		{"other_namespace_pruned", []Resource{cm}, []*unstructured.Unstructured{obj("v1", "ConfigMap", "other", "a")},
			[]Resource{cm}},
		{"remote_namespace_kept", []Resource{remote, other}, nil, []Resource{other}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := pruneSet(tc.synced, tc.target); !slices.Equal(got, tc.want) {
				t.Errorf("pruneSet = %v, want %v", got, tc.want)
			}
		})
	}
}

func TestPhasesDeleteTheOperatorsKindsLast(t *testing.T) {
	var objs []Resource
	for _, kind := range []string{"ConfigMap", "Deployment", "Certificate", "Service", "NetworkPolicy",
		"ServiceAccount", "CustomResourceDefinition", "MutatingWebhookConfiguration", "ClusterRoleBinding"} {
		objs = append(objs, Resource{Kind: kind, Name: kind})
	}
	first, second := phases(objs)
	kinds := func(rs []Resource) []string {
		var out []string
		for _, r := range rs {
			out = append(out, r.Kind)
		}
		return out
	}
	want := []string{"ConfigMap", "Certificate", "NetworkPolicy", "MutatingWebhookConfiguration"}
	if !slices.Equal(kinds(first), want) {
		t.Errorf("first phase = %v, want %v", kinds(first), want)
	}
	want = []string{"Deployment", "Service", "ServiceAccount", "CustomResourceDefinition", "ClusterRoleBinding"}
	if !slices.Equal(kinds(second), want) {
		t.Errorf("second phase = %v, want %v", kinds(second), want)
	}
}

func TestSyncedChanged(t *testing.T) {
	a := Resource{Version: "v1", Kind: "ConfigMap", Name: "a"}
	b := Resource{Version: "v1", Kind: "ConfigMap", Name: "b"}
	for _, tc := range []struct {
		name         string
		old, applied []Resource
		want         bool
	}{
		{"same_set_in_another_order_is_no_change", []Resource{a, b}, []Resource{b, a}, false},
		{"object_added_is_a_change", []Resource{a}, []Resource{a, b}, true},
		{"object_replaced_is_a_change", []Resource{a}, []Resource{b}, true},
		{"first_apply_is_a_change", nil, []Resource{a}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := syncedChanged(tc.old, tc.applied); got != tc.want {
				t.Errorf("syncedChanged = %v, want %v", got, tc.want)
			}
		})
	}
}

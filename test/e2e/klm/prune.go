package klm

import (
	"slices"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// identities returns the Resources of objs in order: what a successful
// apply records as status.synced (skrresources/sync.go objectsToResources).
func identities(objs []*unstructured.Unstructured) []Resource {
	out := make([]Resource, 0, len(objs))
	for _, obj := range objs {
		out = append(out, identity(obj))
	}
	return out
}

// pruneSet returns the objects of synced that target no longer holds,
// compared by the whole identity (controller/manifest/resource_list.go
// Difference): an object whose apiVersion changed is pruned and applied
// anew. The first Namespace RemoteNamespace is kept, as
// controller.go pruneResource keeps it.
func pruneSet(synced []Resource, target []*unstructured.Unstructured) []Resource {
	want := map[Resource]bool{}
	for _, obj := range target {
		want[identity(obj)] = true
	}
	var diff []Resource
	for _, r := range synced {
		if !want[r] {
			diff = append(diff, r)
		}
	}
	i := slices.IndexFunc(diff, func(r Resource) bool { return r.Kind == "Namespace" && r.Name == RemoteNamespace })
	if i >= 0 {
		diff = slices.Delete(diff, i, i+1)
	}
	return diff
}

// syncedChanged reports whether the applied set differs from the recorded
// one, as a set (skrresources/sync.go HasDiff).
func syncedChanged(old, applied []Resource) bool {
	if len(old) != len(applied) {
		return true
	}
	in := map[Resource]bool{}
	for _, r := range applied {
		in[r] = true
	}
	for _, r := range old {
		if !in[r] {
			return true
		}
	}
	return false
}

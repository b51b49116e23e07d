package klm

import (
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kyma-project/kim-snatch/test/framework/objects"
)

// Parse reads a raw manifest, a stream of YAML or JSON documents, into
// objects in order, as internal/util.go ParseManifestToObjects does with
// kubectl's resource builder: Lists are flattened, empty documents
// skipped, and of objects with the same identity only the first is kept.
func Parse(raw []byte) ([]*unstructured.Unstructured, error) {
	docs, err := objects.Decode(raw)
	if err != nil {
		return nil, fmt.Errorf("parse the raw manifest: %w", err)
	}
	var objs []*unstructured.Unstructured
	seen := map[Resource]bool{}
	for _, u := range docs {
		items, err := flatten(u)
		if err != nil {
			return nil, err
		}
		for _, item := range items {
			if id := identity(item); !seen[id] {
				seen[id] = true
				objs = append(objs, item)
			}
		}
	}
	return objs, nil
}

// flatten returns the items of a List, or u alone; nothing for an empty
// document.
func flatten(u *unstructured.Unstructured) ([]*unstructured.Unstructured, error) {
	if len(u.Object) == 0 {
		return nil, nil
	}
	if u.GetKind() == "" || u.GetAPIVersion() == "" {
		return nil, fmt.Errorf("parse the raw manifest: an object without apiVersion or kind: %v", u.Object)
	}
	if !u.IsList() {
		return []*unstructured.Unstructured{u}, nil
	}
	list, err := u.ToList()
	if err != nil {
		return nil, fmt.Errorf("parse the raw manifest: %s: %w", u.GetKind(), err)
	}
	var out []*unstructured.Unstructured
	for i := range list.Items {
		items, err := flatten(&list.Items[i])
		if err != nil {
			return nil, err
		}
		out = append(out, items...)
	}
	return out, nil
}

// A namespacedFunc reports whether a kind is namespaced on the runtime.
type namespacedFunc func(schema.GroupVersionKind) (bool, error)

// normaliseNamespaces defaults the namespace of namespaced objects to
// DefaultNamespace and strips it from cluster-scoped ones, as
// render/normalise.go NormaliseNamespace does. A kind the runtime does not
// know yet (a CRD in the same manifest) is left as it is, as KLM does.
func normaliseNamespaces(objs []*unstructured.Unstructured, namespaced namespacedFunc) error {
	for _, obj := range objs {
		ok, err := namespaced(obj.GroupVersionKind())
		switch {
		case meta.IsNoMatchError(err):
			continue
		case err != nil:
			return fmt.Errorf("scope of %s: %w", obj.GroupVersionKind(), err)
		case ok && obj.GetNamespace() == "":
			obj.SetNamespace(DefaultNamespace)
		case !ok:
			obj.SetNamespace("")
		}
	}
	return nil
}

// identity is the Resource of an object.
func identity(obj *unstructured.Unstructured) Resource {
	gvk := obj.GroupVersionKind()
	return Resource{Group: gvk.Group, Version: gvk.Version, Kind: gvk.Kind,
		Namespace: obj.GetNamespace(), Name: obj.GetName()}
}

// String is the identity in KLM's order (shared.Resource.ID).
func (r Resource) String() string {
	return strings.Join([]string{r.Namespace, r.Name, r.Group, r.Version, r.Kind}, "/")
}

package klm

import (
	"maps"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// transform applies KLM's default transforms, in KLM's order
// (render/default_transforms.go GetDefaultResourceTransforms): the
// managed-by label and owned-by annotation, the component and part-of
// labels, the disclaimer annotation, and the localized images. Each merges
// into what the manifest sets, overwriting the same keys.
func transform(m *Manifest, objs []*unstructured.Unstructured) error {
	for _, obj := range objs {
		mergeLabels(obj, map[string]string{ManagedByLabel: ManagedByValue})
		mergeAnnotations(obj, map[string]string{OwnedByAnnotation: m.Namespace + "/" + m.Name})
		mergeLabels(obj, map[string]string{ComponentLabel: m.Name, PartOfLabel: PartOfValue})
		mergeAnnotations(obj, map[string]string{DisclaimerAnnotation: DisclaimerValue})
	}
	return localizeImages(m.Spec.LocalizedImages, objs)
}

func mergeLabels(obj *unstructured.Unstructured, add map[string]string) {
	obj.SetLabels(merged(obj.GetLabels(), add))
}

func mergeAnnotations(obj *unstructured.Unstructured, add map[string]string) {
	obj.SetAnnotations(merged(obj.GetAnnotations(), add))
}

// merged returns m, or a new map if m is nil, with the keys of add set.
func merged(m, add map[string]string) map[string]string {
	if m == nil {
		m = map[string]string{}
	}
	maps.Copy(m, add)
	return m
}

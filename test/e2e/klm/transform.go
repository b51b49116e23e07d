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
	labels := obj.GetLabels()
	if labels == nil {
		labels = map[string]string{}
	}
	maps.Copy(labels, add)
	obj.SetLabels(labels)
}

func mergeAnnotations(obj *unstructured.Unstructured, add map[string]string) {
	annotations := obj.GetAnnotations()
	if annotations == nil {
		annotations = map[string]string{}
	}
	maps.Copy(annotations, add)
	obj.SetAnnotations(annotations)
}

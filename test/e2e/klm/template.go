package klm

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"
	"k8s.io/client-go/kubernetes"
)

// templateFieldManager publishes templates.
const templateFieldManager = "klm-template-publisher"

// PublishTemplate writes the ModuleTemplate stand-in of module at version
// into namespace of the control plane: a ConfigMap TemplateName(module,
// version) whose TemplateKey holds the raw manifest, as the module's
// release writes a ModuleTemplate whose OCI layer holds it. A Manifest of
// that module and version applies it.
func PublishTemplate(ctx context.Context, cs kubernetes.Interface, namespace, module, version string,
	raw []byte,
) error {
	cm := corev1ac.ConfigMap(TemplateName(module, version), namespace).
		WithLabels(map[string]string{ModuleNameLabel: module}).
		WithData(map[string]string{TemplateKey: string(raw)})
	_, err := cs.CoreV1().ConfigMaps(namespace).Apply(ctx, cm,
		metav1.ApplyOptions{FieldManager: templateFieldManager, Force: true})
	if err != nil {
		return fmt.Errorf("publish template %s/%s: %w", namespace, TemplateName(module, version), err)
	}
	return nil
}

// A templateReader gets a template ConfigMap from the control plane.
type templateReader func(ctx context.Context, key types.NamespacedName) (*corev1.ConfigMap, error)

// render returns the objects of m's layer, transformed for the runtime:
// the raw manifest of its template, parsed and transformed, with their
// namespaces normalised (internal/service/manifest/render/service.go
// RenderTargetResources). KLM caches the parse by layer; the stand-in
// reads the template on every reconcile.
func render(ctx context.Context, get templateReader, namespaced namespacedFunc,
	m *Manifest,
) ([]*unstructured.Unstructured, error) {
	key := types.NamespacedName{Namespace: m.Namespace, Name: TemplateName(m.Spec.Module, m.Spec.Version)}
	cm, err := get(ctx, key)
	if err != nil {
		return nil, fmt.Errorf("get template %s: %w", key, err)
	}
	raw, ok := cm.Data[TemplateKey]
	if !ok {
		return nil, fmt.Errorf("template %s has no %s", key, TemplateKey)
	}
	objs, err := Parse([]byte(raw))
	if err != nil {
		return nil, fmt.Errorf("template %s: %w", key, err)
	}
	if err := transform(m, objs); err != nil {
		return nil, err
	}
	if err := normaliseNamespaces(objs, namespaced); err != nil {
		return nil, err
	}
	return objs, nil
}

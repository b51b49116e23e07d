package klm

// The names KLM gives what it writes, each as lifecycle-manager 1.20.4
// defines it (file given beside each).
const (
	// FieldManager is the field owner of every server-side apply to the
	// runtime (internal/common/fieldowners/const.go).
	FieldManager = "declarative.kyma-project.io/applier"
	// Finalizer keeps a Manifest until its objects are gone
	// (internal/manifest/finalizer/handler.go).
	Finalizer = "declarative.kyma-project.io/finalizer"

	// ManagedByLabel, with ManagedByValue, marks every applied object
	// (api/shared/operator_labels.go).
	ManagedByLabel = "operator.kyma-project.io/managed-by"
	ManagedByValue = "kyma"
	// ComponentLabel carries the Manifest's name, PartOfLabel PartOfValue
	// (internal/service/manifest/render/default_transforms.go).
	ComponentLabel = "app.kubernetes.io/component"
	PartOfLabel    = "app.kubernetes.io/part-of"
	PartOfValue    = "Kyma"
	// OwnedByAnnotation holds "<namespace>/<name>" of the Manifest
	// (api/shared/operator_annotations.go).
	OwnedByAnnotation = "deprecated-operator.kyma-project.io/owned-by"
	// DisclaimerAnnotation, with DisclaimerValue, warns that edits are
	// reverted (default_transforms.go).
	DisclaimerAnnotation = "operator.kyma-project.io/managed-by-reconciler-disclaimer"
	DisclaimerValue      = "DO NOT EDIT - This resource is managed by Kyma.\n" +
		"Any modifications are discarded and the resource is reverted to the original state."

	// SkipReconciliationLabel set to "true" on a Manifest makes KLM skip
	// it (api/v1beta2/manifest_types.go, SkipReconciliation).
	SkipReconciliationLabel = "operator.kyma-project.io/skip-reconciliation"
	// ModuleNameLabel and MandatoryModuleLabel ("true") mark the Manifest
	// of a mandatory module, which a ModuleReleaseMeta pins.
	ModuleNameLabel      = "operator.kyma-project.io/module-name"
	MandatoryModuleLabel = "operator.kyma-project.io/mandatory-module"

	// RemoteNamespace is the runtime's namespace that a prune never
	// deletes (shared.DefaultRemoteNamespace, controller.go pruneResource).
	RemoteNamespace = "kyma-system"
	// DefaultNamespace is where KLM puts a namespaced object that names
	// none (render/normalise.go).
	DefaultNamespace = "default"

	// TemplateKey is the key of a template ConfigMap that holds the raw
	// manifest: the layer KLM pulls from the ModuleTemplate's OCI image.
	TemplateKey = "raw-manifest.yaml"
)

// TemplateName is the name of the ModuleTemplate stand-in of module at
// version, as api/v1beta2/moduletemplate_types.go CreateModuleTemplateName
// names it.
func TemplateName(module, version string) string { return module + "-" + version }

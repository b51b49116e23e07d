package klm

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// Group and Version are the API group and version of the stand-in's own
// kinds, Manifest and ModuleReleaseMeta, which live in the control plane.
const (
	Group   = "klm.test.kim-snatch.kyma-project.io"
	Version = "v1"
)

// GroupVersion is Group at Version.
var GroupVersion = schema.GroupVersion{Group: Group, Version: Version}

// State is a Manifest's status.state, with KLM's values (api/shared/state.go).
type State string

// The states a Manifest passes through.
const (
	StateProcessing State = "Processing"
	StateReady      State = "Ready"
	StateError      State = "Error"
	StateDeleting   State = "Deleting"
	// StateWarning is what KLM reports while it refuses to prune a diff
	// that appeared without a version change.
	StateWarning State = "Warning"
)

// Manifest stands for KLM's Manifest: one module, at one version, on one
// runtime. Its layer is the ModuleTemplate stand-in TemplateName(Module,
// Version) in the Manifest's namespace. A test bumps Spec.Version, directly
// or through a ModuleReleaseMeta, and reads the outcome in Status.
type Manifest struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   ManifestSpec   `json:"spec"`
	Status ManifestStatus `json:"status,omitempty"`
}

// ReadyAt reports whether m has applied the layer of version in full and
// found it Ready: the state KLM reports when a module is installed.
func (m *Manifest) ReadyAt(version string) bool {
	return m.Spec.Version == version && m.Status.State == StateReady && m.Status.ObservedVersion == version
}

// ManifestSpec says which layer to apply.
type ManifestSpec struct {
	// Module names the module; with Version it names the template.
	Module string `json:"module"`
	// Version is the module version whose raw manifest is applied.
	Version string `json:"version"`
	// LocalizedImages replace the images of Deployments and StatefulSets
	// whose name and tag match (KLM's spec.localizedImages).
	LocalizedImages []string `json:"localizedImages,omitempty"`
}

// ManifestStatus is KLM's status of a Manifest, with the layer guard that
// KLM keeps in the annotation sync-oci-ref as ObservedVersion.
type ManifestStatus struct {
	State State `json:"state,omitempty"`
	// Operation is KLM's lastOperation message: the last step or error.
	Operation string `json:"operation,omitempty"`
	// Synced are the objects of the last applied layer: what the next
	// version's prune compares against.
	Synced []Resource `json:"synced,omitempty"`
	// ObservedVersion is the version whose layer was last synced in full.
	// Like KLM's sync-oci-ref it is set to Spec.Version on the first
	// reconcile, and again once a reconcile ends with the state unchanged.
	// A prune diff while it equals Spec.Version is refused (StateWarning).
	ObservedVersion string             `json:"observedVersion,omitempty"`
	Conditions      []metav1.Condition `json:"conditions,omitempty"`
}

// Resource identifies an applied object as KLM's shared.Resource does:
// group, version, kind, namespace and name. A changed apiVersion is a
// different Resource.
type Resource struct {
	Group     string `json:"group"`
	Version   string `json:"version"`
	Kind      string `json:"kind"`
	Namespace string `json:"namespace"`
	Name      string `json:"name"`
}

// GroupVersionKind of the resource.
func (r Resource) GroupVersionKind() schema.GroupVersionKind {
	return schema.GroupVersionKind{Group: r.Group, Version: r.Version, Kind: r.Kind}
}

// ManifestList is a list of Manifests.
type ManifestList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []Manifest `json:"items"`
}

// ModuleReleaseMeta stands for KLM's ModuleReleaseMeta of a mandatory
// module: its name is the module's, and Spec.Mandatory.Version pins the
// version every Manifest of that module gets.
type ModuleReleaseMeta struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec ModuleReleaseMetaSpec `json:"spec"`
}

// ModuleReleaseMetaSpec holds the mandatory pin.
type ModuleReleaseMetaSpec struct {
	Mandatory *Mandatory `json:"mandatory,omitempty"`
}

// Mandatory pins a mandatory module's version.
type Mandatory struct {
	Version string `json:"version"`
}

// ModuleReleaseMetaList is a list of ModuleReleaseMetas.
type ModuleReleaseMetaList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []ModuleReleaseMeta `json:"items"`
}

// AddToScheme registers the stand-in's kinds in s.
func AddToScheme(s *runtime.Scheme) error {
	s.AddKnownTypes(GroupVersion, &Manifest{}, &ManifestList{}, &ModuleReleaseMeta{}, &ModuleReleaseMetaList{})
	metav1.AddToGroupVersion(s, GroupVersion)
	return nil
}

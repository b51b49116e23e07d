package klm

import (
	"slices"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// The kinds are few and flat, so their copies are written out here rather
// than generated.

var (
	_ runtime.Object = (*Manifest)(nil)
	_ runtime.Object = (*ManifestList)(nil)
	_ runtime.Object = (*ModuleReleaseMeta)(nil)
	_ runtime.Object = (*ModuleReleaseMetaList)(nil)
)

// DeepCopy returns a deep copy of m.
func (m *Manifest) DeepCopy() *Manifest {
	if m == nil {
		return nil
	}
	out := &Manifest{TypeMeta: m.TypeMeta, Spec: m.Spec, Status: m.Status}
	m.DeepCopyInto(&out.ObjectMeta)
	out.Spec.LocalizedImages = slices.Clone(m.Spec.LocalizedImages)
	out.Status = *m.Status.DeepCopy()
	return out
}

// DeepCopyObject implements runtime.Object.
func (m *Manifest) DeepCopyObject() runtime.Object { return m.DeepCopy() }

// DeepCopy returns a deep copy of s.
func (s *ManifestStatus) DeepCopy() *ManifestStatus {
	out := *s
	out.Synced = slices.Clone(s.Synced)
	if s.Conditions != nil {
		out.Conditions = make([]metav1.Condition, len(s.Conditions))
		for i := range s.Conditions {
			s.Conditions[i].DeepCopyInto(&out.Conditions[i])
		}
	}
	return &out
}

// DeepCopyObject implements runtime.Object.
func (l *ManifestList) DeepCopyObject() runtime.Object {
	out := &ManifestList{TypeMeta: l.TypeMeta, Items: deepCopyItems(l.Items)}
	l.DeepCopyInto(&out.ListMeta)
	return out
}

// DeepCopy returns a deep copy of m.
func (m *ModuleReleaseMeta) DeepCopy() *ModuleReleaseMeta {
	if m == nil {
		return nil
	}
	out := &ModuleReleaseMeta{TypeMeta: m.TypeMeta}
	m.DeepCopyInto(&out.ObjectMeta)
	if m.Spec.Mandatory != nil {
		mandatory := *m.Spec.Mandatory
		out.Spec.Mandatory = &mandatory
	}
	return out
}

// DeepCopyObject implements runtime.Object.
func (m *ModuleReleaseMeta) DeepCopyObject() runtime.Object { return m.DeepCopy() }

// DeepCopyObject implements runtime.Object.
func (l *ModuleReleaseMetaList) DeepCopyObject() runtime.Object {
	out := &ModuleReleaseMetaList{TypeMeta: l.TypeMeta, Items: deepCopyItems(l.Items)}
	l.DeepCopyInto(&out.ListMeta)
	return out
}

// deepCopyItems returns deep copies of a list's items, nil for none, as the
// copies above always made them.
func deepCopyItems[T any, P interface {
	*T
	DeepCopy() *T
}](items []T) []T {
	var out []T
	for i := range items {
		out = append(out, *P(&items[i]).DeepCopy())
	}
	return out
}

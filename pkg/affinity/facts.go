package affinity

import (
	"slices"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"
)

// Source names the place where a Pod already expresses a choice about the
// pool label key. FactsOf looks at them in the order of the constants.
type Source uint8

const (
	SourceNone Source = iota
	SourceNodeSelector
	SourceRequiredTerm
	SourcePreferredTerm
)

// String returns the field path of the source, for messages.
func (s Source) String() string {
	switch s {
	case SourceNodeSelector:
		return "spec.nodeSelector"
	case SourceRequiredTerm:
		return "a required node affinity term"
	case SourcePreferredTerm:
		return "a preferred node affinity term"
	}
	return "nothing"
}

// Facts is everything the decision and the patch need to know about a Pod,
// small and flat so that the admission handler fills it straight from the
// request bytes; [Policy.FactsOf] fills it from a typed Pod, and a fuzz test in
// the admission package holds the two readings to agreeing.
type Facts struct {
	Bound        bool   // spec.nodeName is set
	Mirror       bool   // the Pod has the MirrorPodAnnotation
	OptedOut     bool   // the OptOutLabel has the OptOutValue
	PoolKeySetBy Source // where the Pod already uses the pool label key

	// The containers the patch must not replace: each true when present and not
	// null, and HasPreferredTerms only when non-empty (an empty list is replaced,
	// the same as appending).
	HasAffinity, HasNodeAffinity, HasPreferredTerms bool
}

// FactsOf reads the facts from a typed Pod: the reference for the hot path,
// which reads JSON.
func (p Policy) FactsOf(pod *corev1.Pod) Facts {
	a := ptr.Deref(pod.Spec.Affinity, corev1.Affinity{})
	na := ptr.Deref(a.NodeAffinity, corev1.NodeAffinity{})
	required := ptr.Deref(na.RequiredDuringSchedulingIgnoredDuringExecution, corev1.NodeSelector{}).NodeSelectorTerms
	preferred := na.PreferredDuringSchedulingIgnoredDuringExecution
	f := Facts{
		Bound:             pod.Spec.NodeName != "",
		OptedOut:          pod.Labels[OptOutLabel] == OptOutValue,
		HasAffinity:       pod.Spec.Affinity != nil,
		HasNodeAffinity:   a.NodeAffinity != nil,
		HasPreferredTerms: len(preferred) > 0,
	}
	_, f.Mirror = pod.Annotations[MirrorPodAnnotation]
	_, inNodeSelector := pod.Spec.NodeSelector[p.PoolLabelKey]
	switch {
	case inNodeSelector:
		f.PoolKeySetBy = SourceNodeSelector
	case slices.ContainsFunc(required, p.usedIn):
		f.PoolKeySetBy = SourceRequiredTerm
	case slices.ContainsFunc(preferred, func(t corev1.PreferredSchedulingTerm) bool { return p.usedIn(t.Preference) }):
		f.PoolKeySetBy = SourcePreferredTerm
	}
	return f
}

// usedIn reports whether one of the term's matchExpressions uses the pool key.
func (p Policy) usedIn(t corev1.NodeSelectorTerm) bool {
	return slices.ContainsFunc(t.MatchExpressions, func(e corev1.NodeSelectorRequirement) bool {
		return e.Key == p.PoolLabelKey
	})
}

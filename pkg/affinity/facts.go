package affinity

import corev1 "k8s.io/api/core/v1"

// Source names the place where a Pod already expresses a choice about the
// pool label key.
type Source uint8

// The places where a Pod can already choose a pool, in the order they are
// looked at.
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
	default:
		return "nothing"
	}
}

// Facts is everything the decision and the patch need to know about a Pod.
// It is small and flat on purpose: the admission handler fills it straight
// from the request bytes without decoding the Pod, and [Policy.FactsOf]
// fills it from a typed Pod. Both readings must agree; a fuzz test in the
// admission package holds them to that.
type Facts struct {
	// Bound is true when spec.nodeName is set.
	Bound bool
	// Mirror is true when the Pod has the MirrorPodAnnotation.
	Mirror bool
	// OptedOut is true when the OptOutLabel has the OptOutValue.
	OptedOut bool
	// PoolKeySetBy is where the Pod already uses the pool label key.
	PoolKeySetBy Source

	// The containers that the patch must not replace. Each is true when the
	// field is present and not null. HasPreferredTerms is true only for a
	// non-empty list: an empty list is replaced by a list with our term,
	// which is the same result as appending to it.
	HasAffinity       bool
	HasNodeAffinity   bool
	HasPreferredTerms bool
}

// FactsOf reads the facts from a typed Pod. It is the reference reading of
// the decision's inputs; the hot path reads the same facts from JSON.
func (p Policy) FactsOf(pod *corev1.Pod) Facts {
	f := Facts{
		Bound:    pod.Spec.NodeName != "",
		OptedOut: pod.Labels[OptOutLabel] == OptOutValue,
	}
	_, f.Mirror = pod.Annotations[MirrorPodAnnotation]
	if _, ok := pod.Spec.NodeSelector[p.PoolLabelKey]; ok {
		f.PoolKeySetBy = SourceNodeSelector
	}
	a := pod.Spec.Affinity
	if a == nil {
		return f
	}
	f.HasAffinity = true
	na := a.NodeAffinity
	if na == nil {
		return f
	}
	f.HasNodeAffinity = true
	f.HasPreferredTerms = len(na.PreferredDuringSchedulingIgnoredDuringExecution) > 0
	if f.PoolKeySetBy != SourceNone {
		return f
	}
	if req := na.RequiredDuringSchedulingIgnoredDuringExecution; req != nil {
		for _, term := range req.NodeSelectorTerms {
			if usesKey(term.MatchExpressions, p.PoolLabelKey) {
				f.PoolKeySetBy = SourceRequiredTerm
				return f
			}
		}
	}
	for _, term := range na.PreferredDuringSchedulingIgnoredDuringExecution {
		if usesKey(term.Preference.MatchExpressions, p.PoolLabelKey) {
			f.PoolKeySetBy = SourcePreferredTerm
			return f
		}
	}
	return f
}

func usesKey(exprs []corev1.NodeSelectorRequirement, key string) bool {
	for _, e := range exprs {
		if e.Key == key {
			return true
		}
	}
	return false
}

package affinity

import (
	"encoding/json"
	"errors"
	"fmt"

	corev1 "k8s.io/api/core/v1"

	"github.com/kyma-project/kim-snatch/pkg/patch"
)

// Reason says why the webhook did what it did. The values are stable: they
// are metric label values and the reason in every decision log line.
type Reason string

// All reasons, one per outcome of the decision order (see Decide).
const (
	ReasonNotPod           Reason = "not-pod"
	ReasonNotCreate        Reason = "not-create"
	ReasonAlreadyScheduled Reason = "already-scheduled"
	ReasonOptedOut         Reason = "opted-out"
	ReasonAlreadySet       Reason = "already-set"
	ReasonInjected         Reason = "injected"
	ReasonError            Reason = "error"
)

// Reasons lists every Reason, for metrics that want to show zeros.
func Reasons() []Reason {
	return []Reason{ReasonNotPod, ReasonNotCreate, ReasonAlreadyScheduled, ReasonOptedOut, ReasonAlreadySet, ReasonInjected, ReasonError}
}

// Decision is the outcome for one Pod. Patch is nil unless Reason is
// ReasonInjected, and shared by every Decision of a Mutator: callers must not
// modify it. Message explains the reason to a person; it never holds Pod data,
// so it is safe to log and cheap to produce.
type Decision struct {
	Reason  Reason
	Message string
	Patch   []byte
}

// Patched reports whether the decision carries a patch.
func (d Decision) Patched() bool { return len(d.Patch) > 0 }

// Mutator decides for one Policy. NewMutator builds every patch and message it
// can return, so that Decide, which runs for every Pod created in the cluster,
// allocates nothing.
type Mutator struct {
	policy Policy
	// One patch for each shape of the existing affinity, see patchFor.
	addAffinity, addNodeAffinity, addPreferredList, appendPreferred []byte

	msgInjected   string
	msgAlreadySet [SourcePreferredTerm + 1]string
}

// The paths are constants, never built from request data. Only "add" is
// ever used: the patch never replaces or removes anything the Pod has.
const (
	pathAffinity     = "/spec/affinity"
	pathNodeAffinity = "/spec/affinity/nodeAffinity"
	pathPreferred    = "/spec/affinity/nodeAffinity/preferredDuringSchedulingIgnoredDuringExecution"
	pathAppend       = pathPreferred + "/-"
)

const (
	msgBound    = "spec.nodeName is set: the Pod is already scheduled"
	msgMirror   = "the Pod is a mirror Pod (annotation " + MirrorPodAnnotation + ")"
	msgOptedOut = "the Pod opts out with the label " + OptOutLabel + "=" + OptOutValue
)

// NewMutator validates the policy and prepares every answer Decide can give.
func NewMutator(p Policy) (*Mutator, error) {
	if err := p.Validate(); err != nil {
		return nil, fmt.Errorf("invalid affinity policy: %w", err)
	}
	m := &Mutator{policy: p}
	m.msgInjected = fmt.Sprintf("added the preferred node affinity term %s In [%s] with weight %d",
		p.PoolLabelKey, p.WorkerPool, p.Weight)
	for s := SourceNodeSelector; s <= SourcePreferredTerm; s++ {
		m.msgAlreadySet[s] = fmt.Sprintf("%s already uses %s: the Pod's own choice is kept", s, p.PoolLabelKey)
	}
	var errs []error
	add := func(path string, value any) []byte {
		b, err := json.Marshal([]patch.Operation{{Op: "add", Path: path, Value: value}})
		errs = append(errs, err)
		return b
	}
	terms := []corev1.PreferredSchedulingTerm{p.Term()}
	nodeAffinity := corev1.NodeAffinity{PreferredDuringSchedulingIgnoredDuringExecution: terms}
	m.addAffinity = add(pathAffinity, corev1.Affinity{NodeAffinity: &nodeAffinity})
	m.addNodeAffinity = add(pathNodeAffinity, nodeAffinity)
	m.addPreferredList = add(pathPreferred, terms)
	m.appendPreferred = add(pathAppend, terms[0])
	if err := errors.Join(errs...); err != nil {
		return nil, fmt.Errorf("encode patch: %w", err)
	}
	return m, nil
}

// Policy returns the policy the Mutator was built for.
func (m *Mutator) Policy() Policy { return m.policy }

// Decide applies the decision order of docs/architecture.md ("Admission
// decision order") to a Pod.
func (m *Mutator) Decide(f Facts) Decision {
	switch {
	case f.Bound:
		return Decision{Reason: ReasonAlreadyScheduled, Message: msgBound}
	case f.Mirror:
		return Decision{Reason: ReasonAlreadyScheduled, Message: msgMirror}
	case f.OptedOut:
		return Decision{Reason: ReasonOptedOut, Message: msgOptedOut}
	case f.PoolKeySetBy != SourceNone && f.PoolKeySetBy <= SourcePreferredTerm:
		return Decision{Reason: ReasonAlreadySet, Message: m.msgAlreadySet[f.PoolKeySetBy]}
	}
	return Decision{Reason: ReasonInjected, Message: m.msgInjected, Patch: m.patchFor(f)}
}

// patchFor picks the one "add" that fits the existing affinity: each level is
// created only when it is absent, so podAffinity, podAntiAffinity, required and
// other preferred terms are never replaced.
func (m *Mutator) patchFor(f Facts) []byte {
	switch {
	case !f.HasAffinity:
		return m.addAffinity
	case !f.HasNodeAffinity:
		return m.addNodeAffinity
	case !f.HasPreferredTerms:
		return m.addPreferredList
	}
	return m.appendPreferred
}

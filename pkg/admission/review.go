package admission

import (
	"cmp"
	"errors"
	"fmt"

	"github.com/kyma-project/kim-snatch/pkg/affinity"
)

// The only AdmissionReview version served. The MutatingWebhookConfiguration
// asks for v1 alone, and the API server has sent v1 since Kubernetes 1.16.
const (
	reviewAPIVersion = "admission.k8s.io/v1"
	reviewKind       = "AdmissionReview"
)

// review is what the decision needs of an AdmissionReview; its strings point
// into the request body.
type review struct {
	apiVersion, kind rawString
	hasRequest       bool
	// uid is echoed as it came: validated, it needs no re-encoding.
	uid                                         rawString
	kindGroup, kindKind, subResource, operation rawString
	namespace, name                             rawString
	dryRun, hasObject                           bool
	pod                                         podFacts
	// podErr: the object is well-formed JSON but no Pod; allowed, reason "error".
	podErr error
}

// isPod reports whether the request is for a Pod itself, not a subresource.
func (r *review) isPod() bool {
	return len(r.kindGroup.raw) == 0 && r.kindKind.is("Pod") && len(r.subResource.raw) == 0
}

func (r *review) isCreate() bool { return r.operation.is("CREATE") }

// isPodCreate reports whether the request creates a Pod, whatever the
// decision on it (snatch_webhook_last_pod_review_timestamp_seconds).
func (r *review) isPodCreate() bool { return r.isPod() && r.isCreate() }

// podFacts is what the decision and the decision log need from a Pod.
type podFacts struct {
	name, generateName rawString
	facts              affinity.Facts
}

// decodeReview reads an AdmissionReview in one pass over body. A field of
// the wrong type is an error other than errInvalidJSON, or r.podErr in the Pod.
func decodeReview(s *scanner, body []byte, poolKey string) (r review, err error) {
	s.reset(body)
	if s.peek() != '{' {
		return r, cmp.Or(s.skip(), errors.New("the body must be a JSON object"))
	}
	err = s.object("the body",
		member{path: "apiVersion", str: &r.apiVersion},
		member{path: "kind", str: &r.kind},
		member{path: "request", read: func() error { return r.request(s, poolKey) }})
	return r, s.done(err)
}

func (r *review) request(s *scanner, poolKey string) error {
	r.hasRequest = s.peek() == '{'
	return s.object("request",
		member{path: "request.uid", read: func() (err error) {
			if s.peek() == '"' {
				r.uid, err = s.readString()
				return err
			}
			s.mismatch("request.uid", "a string") // null too: a review without a uid is malformed
			return s.skip()
		}},
		member{path: "request.kind", read: func() error {
			return s.object("request.kind",
				member{path: "request.kind.group", str: &r.kindGroup},
				member{path: "request.kind.kind", str: &r.kindKind})
		}},
		member{path: "request.subResource", str: &r.subResource},
		member{path: "request.operation", str: &r.operation},
		member{path: "request.namespace", str: &r.namespace},
		member{path: "request.name", str: &r.name},
		member{path: "request.dryRun", read: func() error {
			ok, err := s.expect("request.dryRun", "a boolean", 't', 'f')
			if ok {
				r.dryRun, err = s.peek() == 't', s.skip()
			}
			return err
		}},
		member{path: "request.object", read: func() error {
			// The Pod's type mismatches make the decision fail open, not a 4xx.
			outer := s.typeErr
			r.hasObject, s.typeErr = s.peek() == '{', nil
			err := decodePod(s, poolKey, &r.pod)
			r.podErr, s.typeErr = s.typeErr, outer
			return err
		}})
}

// DecidePod runs the handler's decision on one Pod, in the JSON the API server
// sends, as for a CREATE. "snatch-webhook mutate" uses it, so that its answer
// is the webhook's.
func DecidePod(m *affinity.Mutator, pod []byte) (affinity.Decision, error) {
	var s scanner
	s.reset(pod)
	var p podFacts
	var err error
	if s.peek() == '{' {
		err = s.done(decodePod(&s, m.Policy().PoolLabelKey, &p))
	} else if err = s.done(s.skip()); err == nil { // anything else is no Pod, as in the handler
		err = errors.New("it is null")
	}
	if err != nil {
		return affinity.Decision{Reason: affinity.ReasonError}, fmt.Errorf("read the Pod: %w", err)
	}
	return m.Decide(p.facts), nil
}

// decodePod reads a Pod object, if the next value is one, and fills p.
func decodePod(s *scanner, poolKey string, p *podFacts) error {
	return s.object("object",
		member{path: "metadata", read: func() error { return p.metadata(s) }},
		member{path: "spec", read: func() error { return p.spec(s, poolKey) }})
}

// sawPoolKey records that src uses the pool key; of several, the first in
// FactsOf's order wins.
func (p *podFacts) sawPoolKey(src affinity.Source, used bool) {
	if used && (p.facts.PoolKeySetBy == affinity.SourceNone || src < p.facts.PoolKeySetBy) {
		p.facts.PoolKeySetBy = src
	}
}

func (p *podFacts) metadata(s *scanner) error {
	return s.object("metadata",
		member{path: "metadata.name", str: &p.name},
		member{path: "metadata.generateName", str: &p.generateName},
		member{path: "metadata.labels", read: func() error {
			return stringMap(s, "metadata.labels", func(k, v rawString) {
				if k.is(affinity.OptOutLabel) {
					p.facts.OptedOut = v.is(affinity.OptOutValue)
				}
			})
		}},
		member{path: "metadata.annotations", read: func() error {
			return stringMap(s, "metadata.annotations", func(k, _ rawString) {
				p.facts.Mirror = p.facts.Mirror || k.is(affinity.MirrorPodAnnotation)
			})
		}})
}

// stringMap walks a map[string]string. fn must not keep its arguments.
func stringMap(s *scanner, field string, fn func(k, v rawString)) error {
	if ok, err := s.enter(field, "an object", '{'); !ok {
		return err
	}
	for s.peek() != '}' {
		k, err := s.readString()
		if err != nil {
			return err
		}
		v, err := s.stringOrNull(field)
		if err != nil {
			return err
		}
		fn(k, v)
	}
	return s.token()
}

func (p *podFacts) spec(s *scanner, poolKey string) error {
	var nodeName rawString
	err := s.object("spec",
		member{path: "spec.nodeName", str: &nodeName},
		member{path: "spec.nodeSelector", read: func() error {
			return stringMap(s, "spec.nodeSelector", func(k, _ rawString) {
				p.sawPoolKey(affinity.SourceNodeSelector, k.is(poolKey))
			})
		}},
		member{path: "spec.affinity", read: func() error {
			p.facts.HasAffinity = s.peek() == '{'
			return s.withMember("spec.affinity", "nodeAffinity", func() error { return p.nodeAffinity(s, poolKey) })
		}})
	p.facts.Bound = len(nodeName.raw) > 0
	return err
}

// nodeAffinity reads a NodeAffinity's terms. The list of preferred terms
// counts as present when it has elements, whatever they hold, as in FactsOf.
func (p *podFacts) nodeAffinity(s *scanner, poolKey string) error {
	const required = "spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution"
	const preferred = "spec.affinity.nodeAffinity.preferredDuringSchedulingIgnoredDuringExecution"
	p.facts.HasNodeAffinity = s.peek() == '{'
	return s.object("spec.affinity.nodeAffinity",
		member{path: required, read: func() error {
			return s.withMember(required, "nodeSelectorTerms", func() error {
				return s.eachElement(required+".nodeSelectorTerms", func() error {
					return p.nodeSelectorTerm(s, poolKey, affinity.SourceRequiredTerm)
				})
			})
		}},
		member{path: preferred, read: func() error {
			return s.eachElement(preferred, func() error {
				p.facts.HasPreferredTerms = true
				return s.withMember(preferred+"[]", "preference", func() error {
					return p.nodeSelectorTerm(s, poolKey, affinity.SourcePreferredTerm)
				})
			})
		}})
}

// nodeSelectorTerm reads the keys of a term's matchExpressions; matchFields
// select on metadata.name only.
func (p *podFacts) nodeSelectorTerm(s *scanner, poolKey string, src affinity.Source) error {
	return s.withMember("nodeSelectorTerm", "matchExpressions", func() error {
		return s.eachElement("nodeSelectorTerm.matchExpressions", func() error {
			return s.withMember("matchExpression", "key", func() error {
				key, err := s.stringOrNull("matchExpression.key")
				p.sawPoolKey(src, key.is(poolKey))
				return err
			})
		})
	})
}

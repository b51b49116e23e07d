package admission

import "github.com/kyma-project/kim-snatch/pkg/affinity"

// The only AdmissionReview version served. The MutatingWebhookConfiguration
// asks for v1 alone, and the API server has sent v1 since Kubernetes 1.16.
const (
	reviewAPIVersion = "admission.k8s.io/v1"
	reviewKind       = "AdmissionReview"
)

// review is the part of an AdmissionReview request that the decision needs.
// Its byte slices point into the request body; nothing is copied.
type review struct {
	apiVersion, kind str

	hasRequest bool
	// uid is the uid's JSON token with its quotes, echoed verbatim: it was
	// validated as a JSON string, so it needs no re-encoding.
	uid []byte

	kindGroup, kindKind []byte
	subResource         []byte
	operation           []byte
	namespace, name     str
	dryRun              bool

	hasObject bool
	pod       podFacts
	// podErr is set when the object is well-formed JSON but not shaped like
	// a Pod; the request is then allowed with reason "error".
	podErr error
}

// str is a string read in place, with a flag for escapes (see unquote).
type str struct {
	raw     []byte
	escaped bool
}

func (s str) is(want string) bool { return is(s.raw, s.escaped, want) }

func (s str) String() string {
	if s.escaped {
		return unquote(s.raw)
	}
	return string(s.raw)
}

// podFacts is what the decision and the decision log need from a Pod.
type podFacts struct {
	name, generateName str
	facts              affinity.Facts

	// Where the pool key was seen, combined in affinity.FactsOf's order
	// once the whole Pod has been read, since JSON member order is free.
	inNodeSelector, inRequired, inPreferred bool
}

// isPod reports whether the request is for the Pod resource itself, not a
// subresource or another kind.
func (r *review) isPod() bool {
	return len(r.kindGroup) == 0 && string(r.kindKind) == "Pod" && len(r.subResource) == 0
}

func (r *review) isCreate() bool { return string(r.operation) == "CREATE" }

// decodeReview reads an AdmissionReview in one pass over body. It returns a
// syntax error for malformed JSON and a *fieldTypeError when the envelope
// has a field of the wrong type; a wrongly typed Pod ends in r.podErr.
func decodeReview(w *walker, body []byte, poolKey string) (review, error) {
	return walk(w, body, func(s *scanner) (review, error) {
		var r review
		if s.peek() != '{' {
			if err := s.skip(); err != nil {
				return r, err
			}
			return r, &fieldTypeError{field: "the body", want: "a JSON object"}
		}
		m := s.members("the body")
		for s.next(&m) {
			switch {
			case m.key.is("apiVersion"):
				m.err = s.strInto(&r.apiVersion, "apiVersion")
			case m.key.is("kind"):
				m.err = s.strInto(&r.kind, "kind")
			case m.key.is("request"):
				m.err = r.request(s, poolKey)
			default:
				m.err = s.skip()
			}
		}
		if m.err != nil {
			return r, m.err
		}
		if err := s.end(); err != nil {
			return r, err
		}
		return r, s.typeErr
	})
}

func (r *review) request(s *scanner, poolKey string) error {
	m := s.members("request")
	for s.next(&m) {
		switch {
		case m.key.is("uid"):
			if s.peek() != '"' {
				s.mismatch("request.uid", "a string")
				m.err = s.skip()
				break
			}
			r.uid, m.err = s.value()
		case m.key.is("kind"):
			m.err = r.groupVersionKind(s)
		case m.key.is("subResource"):
			r.subResource, m.err = s.plainString("request.subResource")
		case m.key.is("operation"):
			r.operation, m.err = s.plainString("request.operation")
		case m.key.is("namespace"):
			m.err = s.strInto(&r.namespace, "request.namespace")
		case m.key.is("name"):
			m.err = s.strInto(&r.name, "request.name")
		case m.key.is("dryRun"):
			r.dryRun, m.err = s.boolOrNull("request.dryRun")
		case m.key.is("object"):
			m.err = r.object(s, poolKey)
		default:
			m.err = s.skip()
		}
	}
	r.hasRequest = m.present
	return m.err
}

func (r *review) groupVersionKind(s *scanner) error {
	m := s.members("request.kind")
	for s.next(&m) {
		switch {
		case m.key.is("group"):
			r.kindGroup, m.err = s.plainString("request.kind.group")
		case m.key.is("kind"):
			r.kindKind, m.err = s.plainString("request.kind.kind")
		default:
			m.err = s.skip()
		}
	}
	return m.err
}

// object reads the Pod. Type mismatches inside it are kept apart from the
// envelope's: they make the decision fail open instead of a 4xx.
func (r *review) object(s *scanner, poolKey string) error {
	outer := s.typeErr
	s.typeErr = nil
	var err error
	r.hasObject, err = decodePod(s, poolKey, &r.pod)
	r.podErr, s.typeErr = s.typeErr, outer
	return err
}

// plainString reads a string that is compared as a whole; escapes are
// decoded so that the comparison is exact.
func (s *scanner) plainString(field string) ([]byte, error) {
	raw, esc, err := s.stringOrNull(field)
	if esc {
		raw = []byte(unquote(raw))
	}
	return raw, err
}

// strInto reads a string or null in place into *v.
func (s *scanner) strInto(v *str, field string) error {
	var err error
	v.raw, v.escaped, err = s.stringOrNull(field)
	return err
}

// decodePod reads a Pod object and fills p. It returns false for null.
func decodePod(s *scanner, poolKey string, p *podFacts) (bool, error) {
	m := s.members("object")
	for s.next(&m) {
		switch {
		case m.key.is("metadata"):
			m.err = p.metadata(s)
		case m.key.is("spec"):
			m.err = p.spec(s, poolKey)
		default:
			m.err = s.skip()
		}
	}
	if m.err != nil || !m.present {
		return false, m.err
	}
	switch {
	case p.inNodeSelector:
		p.facts.PoolKeySetBy = affinity.SourceNodeSelector
	case p.inRequired:
		p.facts.PoolKeySetBy = affinity.SourceRequiredTerm
	case p.inPreferred:
		p.facts.PoolKeySetBy = affinity.SourcePreferredTerm
	}
	return true, nil
}

func (p *podFacts) metadata(s *scanner) error {
	m := s.members("metadata")
	for s.next(&m) {
		switch {
		case m.key.is("name"):
			m.err = s.strInto(&p.name, "metadata.name")
		case m.key.is("generateName"):
			m.err = s.strInto(&p.generateName, "metadata.generateName")
		case m.key.is("labels"):
			m.err = stringMap(s, "metadata.labels", func(k, v str) {
				if k.is(affinity.OptOutLabel) {
					p.facts.OptedOut = v.is(affinity.OptOutValue)
				}
			})
		case m.key.is("annotations"):
			m.err = stringMap(s, "metadata.annotations", func(k, _ str) {
				if k.is(affinity.MirrorPodAnnotation) {
					p.facts.Mirror = true
				}
			})
		default:
			m.err = s.skip()
		}
	}
	return m.err
}

// stringMap walks a map[string]string. fn must not keep its arguments.
func stringMap(s *scanner, field string, fn func(k, v str)) error {
	m := s.members(field)
	for s.next(&m) {
		var v str
		if m.err = s.strInto(&v, field); m.err == nil {
			fn(m.key, v)
		}
	}
	return m.err
}

func (p *podFacts) spec(s *scanner, poolKey string) error {
	m := s.members("spec")
	for s.next(&m) {
		switch {
		case m.key.is("nodeName"):
			var raw []byte
			raw, _, m.err = s.stringOrNull("spec.nodeName")
			p.facts.Bound = len(raw) > 0
		case m.key.is("nodeSelector"):
			m.err = stringMap(s, "spec.nodeSelector", func(k, _ str) {
				if k.is(poolKey) {
					p.inNodeSelector = true
				}
			})
		case m.key.is("affinity"):
			m.err = p.affinity(s, poolKey)
		default:
			m.err = s.skip()
		}
	}
	return m.err
}

func (p *podFacts) affinity(s *scanner, poolKey string) error {
	m := s.members("spec.affinity")
	for s.next(&m) {
		if m.key.is("nodeAffinity") {
			m.err = p.nodeAffinity(s, poolKey)
		} else {
			m.err = s.skip()
		}
	}
	p.facts.HasAffinity = m.present
	return m.err
}

func (p *podFacts) nodeAffinity(s *scanner, poolKey string) error {
	m := s.members("spec.affinity.nodeAffinity")
	for s.next(&m) {
		switch {
		case m.key.is("requiredDuringSchedulingIgnoredDuringExecution"):
			m.err = p.required(s, poolKey)
		case m.key.is("preferredDuringSchedulingIgnoredDuringExecution"):
			m.err = p.preferred(s, poolKey)
		default:
			m.err = s.skip()
		}
	}
	p.facts.HasNodeAffinity = m.present
	return m.err
}

// required reads a NodeSelector: {nodeSelectorTerms: [{matchExpressions}]}.
func (p *podFacts) required(s *scanner, poolKey string) error {
	const field = "spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution"
	m := s.members(field)
	for s.next(&m) {
		if !m.key.is("nodeSelectorTerms") {
			m.err = s.skip()
			continue
		}
		m.err = eachElement(s, field+".nodeSelectorTerms", func() error {
			return nodeSelectorTerm(s, poolKey, &p.inRequired)
		})
	}
	return m.err
}

// preferred reads [{weight, preference: NodeSelectorTerm}]. The list counts
// as present when it has elements, whatever they hold, as in FactsOf.
func (p *podFacts) preferred(s *scanner, poolKey string) error {
	const field = "spec.affinity.nodeAffinity.preferredDuringSchedulingIgnoredDuringExecution"
	return eachElement(s, field, func() error {
		p.facts.HasPreferredTerms = true
		m := s.members(field + "[]")
		for s.next(&m) {
			if m.key.is("preference") {
				m.err = nodeSelectorTerm(s, poolKey, &p.inPreferred)
			} else {
				m.err = s.skip()
			}
		}
		return m.err
	})
}

// nodeSelectorTerm sets *found when one of the term's matchExpressions uses
// the pool key. matchFields are not looked at: they only select on
// metadata.name.
func nodeSelectorTerm(s *scanner, poolKey string, found *bool) error {
	const field = "nodeSelectorTerm"
	m := s.members(field)
	for s.next(&m) {
		if !m.key.is("matchExpressions") {
			m.err = s.skip()
			continue
		}
		m.err = eachElement(s, field+".matchExpressions", func() error {
			return matchExpression(s, poolKey, found)
		})
	}
	return m.err
}

func matchExpression(s *scanner, poolKey string, found *bool) error {
	m := s.members("matchExpression")
	for s.next(&m) {
		if !m.key.is("key") {
			m.err = s.skip()
			continue
		}
		var v str
		m.err = s.strInto(&v, "matchExpression.key")
		if v.is(poolKey) {
			*found = true
		}
	}
	return m.err
}

// memberIter walks the members of one object:
//
//	m := s.members(field)
//	for s.next(&m) {
//		// read or skip the value of m.key, setting m.err
//	}
//	return m.err
//
// It is a struct rather than a callback so that the walk costs no indirect
// call per member: this runs over every Pod the cluster creates. It holds
// no pointer to the scanner, which would move the scanner to the heap.
type memberIter struct {
	// present is true when an object was there: false for null, and for a
	// value of another type, which is recorded as a mismatch and skipped.
	present bool
	key     str
	err     error
}

// members opens the object at the scanner's position for a walk.
func (s *scanner) members(field string) memberIter {
	ok, err := s.open('{', field)
	return memberIter{present: ok, err: err}
}

// next moves m to the next member; it returns false at the end of the object
// or once m.err is set, by the walk or by the loop body.
func (s *scanner) next(m *memberIter) bool {
	if m.err != nil || !m.present {
		return false
	}
	key, esc, more, err := s.member()
	m.key, m.err = str{raw: key, escaped: esc}, err
	return err == nil && more
}

// eachElement calls fn at each element of an array (or not at all for
// null); fn must consume the element.
func eachElement(s *scanner, field string, fn func() error) error {
	ok, err := s.open('[', field)
	if err != nil || !ok {
		return err
	}
	for {
		more, err := s.element()
		if err != nil || !more {
			return err
		}
		if err := fn(); err != nil {
			return err
		}
	}
}

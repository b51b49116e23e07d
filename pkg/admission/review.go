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
func decodeReview(body []byte, poolKey string) (review, error) {
	var r review
	s := scanner{data: body}
	if s.peek() != '{' {
		if s.pos >= len(s.data) {
			return r, s.fail("no JSON value")
		}
		if err := s.skip(); err != nil {
			return r, err
		}
		return r, &fieldTypeError{field: "the body", want: "a JSON object"}
	}
	s.pos++
	s.depth++
	first := true
	for {
		key, esc, more, err := s.member(&first)
		if err != nil {
			return r, err
		}
		if !more {
			break
		}
		switch {
		case is(key, esc, "apiVersion"):
			r.apiVersion.raw, r.apiVersion.escaped, err = s.stringOrNull("apiVersion")
		case is(key, esc, "kind"):
			r.kind.raw, r.kind.escaped, err = s.stringOrNull("kind")
		case is(key, esc, "request"):
			err = r.request(&s, poolKey)
		default:
			err = s.skip()
		}
		if err != nil {
			return r, err
		}
	}
	if err := s.end(); err != nil {
		return r, err
	}
	return r, s.typeErr
}

func (r *review) request(s *scanner, poolKey string) error {
	ok, err := s.open('{', "request")
	if err != nil || !ok {
		return err
	}
	r.hasRequest = true
	first := true
	for {
		key, esc, more, err := s.member(&first)
		if err != nil || !more {
			return err
		}
		switch {
		case is(key, esc, "uid"):
			if s.peek() == '"' {
				start := s.pos
				_, _, err = s.str()
				r.uid = s.data[start:s.pos]
			} else {
				s.mismatch("request.uid", "a string")
				err = s.skip()
			}
		case is(key, esc, "kind"):
			err = r.groupVersionKind(s)
		case is(key, esc, "subResource"):
			r.subResource, err = s.plainString("request.subResource")
		case is(key, esc, "operation"):
			r.operation, err = s.plainString("request.operation")
		case is(key, esc, "namespace"):
			r.namespace.raw, r.namespace.escaped, err = s.stringOrNull("request.namespace")
		case is(key, esc, "name"):
			r.name.raw, r.name.escaped, err = s.stringOrNull("request.name")
		case is(key, esc, "dryRun"):
			r.dryRun, err = s.boolOrNull("request.dryRun")
		case is(key, esc, "object"):
			err = r.object(s, poolKey)
		default:
			err = s.skip()
		}
		if err != nil {
			return err
		}
	}
}

func (r *review) groupVersionKind(s *scanner) error {
	ok, err := s.open('{', "request.kind")
	if err != nil || !ok {
		return err
	}
	first := true
	for {
		key, esc, more, err := s.member(&first)
		if err != nil || !more {
			return err
		}
		switch {
		case is(key, esc, "group"):
			r.kindGroup, err = s.plainString("request.kind.group")
		case is(key, esc, "kind"):
			r.kindKind, err = s.plainString("request.kind.kind")
		default:
			err = s.skip()
		}
		if err != nil {
			return err
		}
	}
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

// decodePod reads a Pod object and fills p. It returns false for null.
func decodePod(s *scanner, poolKey string, p *podFacts) (bool, error) {
	ok, err := s.open('{', "object")
	if err != nil || !ok {
		return false, err
	}
	first := true
	for {
		key, esc, more, err := s.member(&first)
		if err != nil {
			return false, err
		}
		if !more {
			break
		}
		switch {
		case is(key, esc, "metadata"):
			err = p.metadata(s)
		case is(key, esc, "spec"):
			err = p.spec(s, poolKey)
		default:
			err = s.skip()
		}
		if err != nil {
			return false, err
		}
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
	ok, err := s.open('{', "metadata")
	if err != nil || !ok {
		return err
	}
	first := true
	for {
		key, esc, more, err := s.member(&first)
		if err != nil || !more {
			return err
		}
		switch {
		case is(key, esc, "name"):
			p.name.raw, p.name.escaped, err = s.stringOrNull("metadata.name")
		case is(key, esc, "generateName"):
			p.generateName.raw, p.generateName.escaped, err = s.stringOrNull("metadata.generateName")
		case is(key, esc, "labels"):
			err = stringMap(s, "metadata.labels", func(k, v str) {
				if is(k.raw, k.escaped, affinity.OptOutLabel) {
					p.facts.OptedOut = is(v.raw, v.escaped, affinity.OptOutValue)
				}
			})
		case is(key, esc, "annotations"):
			err = stringMap(s, "metadata.annotations", func(k, _ str) {
				if is(k.raw, k.escaped, affinity.MirrorPodAnnotation) {
					p.facts.Mirror = true
				}
			})
		default:
			err = s.skip()
		}
		if err != nil {
			return err
		}
	}
}

// stringMap walks a map[string]string. fn must not keep its arguments.
func stringMap(s *scanner, field string, fn func(k, v str)) error {
	ok, err := s.open('{', field)
	if err != nil || !ok {
		return err
	}
	first := true
	for {
		key, esc, more, err := s.member(&first)
		if err != nil || !more {
			return err
		}
		var v str
		if v.raw, v.escaped, err = s.stringOrNull(field); err != nil {
			return err
		}
		fn(str{raw: key, escaped: esc}, v)
	}
}

func (p *podFacts) spec(s *scanner, poolKey string) error {
	ok, err := s.open('{', "spec")
	if err != nil || !ok {
		return err
	}
	first := true
	for {
		key, esc, more, err := s.member(&first)
		if err != nil || !more {
			return err
		}
		switch {
		case is(key, esc, "nodeName"):
			var raw []byte
			raw, _, err = s.stringOrNull("spec.nodeName")
			p.facts.Bound = len(raw) > 0
		case is(key, esc, "nodeSelector"):
			err = stringMap(s, "spec.nodeSelector", func(k, _ str) {
				if is(k.raw, k.escaped, poolKey) {
					p.inNodeSelector = true
				}
			})
		case is(key, esc, "affinity"):
			err = p.affinity(s, poolKey)
		default:
			err = s.skip()
		}
		if err != nil {
			return err
		}
	}
}

func (p *podFacts) affinity(s *scanner, poolKey string) error {
	ok, err := s.open('{', "spec.affinity")
	if err != nil || !ok {
		return err
	}
	p.facts.HasAffinity = true
	first := true
	for {
		key, esc, more, err := s.member(&first)
		if err != nil || !more {
			return err
		}
		if is(key, esc, "nodeAffinity") {
			err = p.nodeAffinity(s, poolKey)
		} else {
			err = s.skip()
		}
		if err != nil {
			return err
		}
	}
}

func (p *podFacts) nodeAffinity(s *scanner, poolKey string) error {
	ok, err := s.open('{', "spec.affinity.nodeAffinity")
	if err != nil || !ok {
		return err
	}
	p.facts.HasNodeAffinity = true
	first := true
	for {
		key, esc, more, err := s.member(&first)
		if err != nil || !more {
			return err
		}
		switch {
		case is(key, esc, "requiredDuringSchedulingIgnoredDuringExecution"):
			err = p.required(s, poolKey)
		case is(key, esc, "preferredDuringSchedulingIgnoredDuringExecution"):
			err = p.preferred(s, poolKey)
		default:
			err = s.skip()
		}
		if err != nil {
			return err
		}
	}
}

// required reads a NodeSelector: {nodeSelectorTerms: [{matchExpressions}]}.
func (p *podFacts) required(s *scanner, poolKey string) error {
	const field = "spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution"
	ok, err := s.open('{', field)
	if err != nil || !ok {
		return err
	}
	first := true
	for {
		key, esc, more, err := s.member(&first)
		if err != nil || !more {
			return err
		}
		if is(key, esc, "nodeSelectorTerms") {
			err = eachElement(s, field+".nodeSelectorTerms", func() error {
				return nodeSelectorTerm(s, poolKey, &p.inRequired)
			})
		} else {
			err = s.skip()
		}
		if err != nil {
			return err
		}
	}
}

// preferred reads [{weight, preference: NodeSelectorTerm}]. The list counts
// as present when it has elements, whatever they hold, as in FactsOf.
func (p *podFacts) preferred(s *scanner, poolKey string) error {
	const field = "spec.affinity.nodeAffinity.preferredDuringSchedulingIgnoredDuringExecution"
	n := 0
	err := eachElement(s, field, func() error {
		n++
		ok, err := s.open('{', field+"[]")
		if err != nil || !ok {
			return err
		}
		first := true
		for {
			key, esc, more, err := s.member(&first)
			if err != nil || !more {
				return err
			}
			if is(key, esc, "preference") {
				err = nodeSelectorTerm(s, poolKey, &p.inPreferred)
			} else {
				err = s.skip()
			}
			if err != nil {
				return err
			}
		}
	})
	if n > 0 {
		p.facts.HasPreferredTerms = true
	}
	return err
}

// nodeSelectorTerm sets *found when one of the term's matchExpressions uses
// the pool key. matchFields are not looked at: they only select on
// metadata.name.
func nodeSelectorTerm(s *scanner, poolKey string, found *bool) error {
	const field = "nodeSelectorTerm"
	ok, err := s.open('{', field)
	if err != nil || !ok {
		return err
	}
	first := true
	for {
		key, esc, more, err := s.member(&first)
		if err != nil || !more {
			return err
		}
		if is(key, esc, "matchExpressions") {
			err = eachElement(s, field+".matchExpressions", func() error {
				return matchExpression(s, poolKey, found)
			})
		} else {
			err = s.skip()
		}
		if err != nil {
			return err
		}
	}
}

func matchExpression(s *scanner, poolKey string, found *bool) error {
	ok, err := s.open('{', "matchExpression")
	if err != nil || !ok {
		return err
	}
	first := true
	for {
		key, esc, more, err := s.member(&first)
		if err != nil || !more {
			return err
		}
		if is(key, esc, "key") {
			var v str
			v.raw, v.escaped, err = s.stringOrNull("matchExpression.key")
			if is(v.raw, v.escaped, poolKey) {
				*found = true
			}
		} else {
			err = s.skip()
		}
		if err != nil {
			return err
		}
	}
}

// eachElement calls fn at each element of an array (or not at all for
// null); fn must consume the element.
func eachElement(s *scanner, field string, fn func() error) error {
	ok, err := s.open('[', field)
	if err != nil || !ok {
		return err
	}
	first := true
	for {
		more, err := s.element(&first)
		if err != nil || !more {
			return err
		}
		if err := fn(); err != nil {
			return err
		}
	}
}

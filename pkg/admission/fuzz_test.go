package admission

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"path/filepath"
	"regexp"
	"testing"
	"unicode/utf8"

	corev1 "k8s.io/api/core/v1"

	"github.com/kyma-project/kim-snatch/pkg/affinity"
)

// FuzzDecode holds the walk to the standard library:
//
//   - for any bytes, the walk accepts exactly what json.Valid accepts, less
//     what jsontext rejects on purpose: invalid UTF-8, duplicate member
//     names (found here by an independent walk over encoding/json's tokens)
//     and escaped lone surrogates; decoding a review never panics;
//   - for any Pod that decodes, the facts read from its encoding (the bytes
//     the API server sends) equal the typed reading, affinity.FactsOf.
//
// The corpus is seeded with the golden Pods and the benchmark reviews.
func FuzzDecode(f *testing.F) {
	golden, err := filepath.Glob(filepath.Join("..", "affinity", "testdata", "*.yaml"))
	if err != nil || len(golden) == 0 {
		f.Fatalf("no golden Pods: %v", err)
	}
	for _, file := range golden {
		f.Add(goldenPod(f, filepath.Base(file)))
	}
	for _, file := range []string{"review-pod-5k5.json", "review-pod-8k8-managed-fields.json"} {
		b := readFile(f, file)
		f.Add(b)
		var rev struct {
			Request struct{ Object json.RawMessage } `json:"request"`
		}
		if err := json.Unmarshal(b, &rev); err != nil {
			f.Fatal(err)
		}
		f.Add([]byte(rev.Request.Object))
	}
	for _, s := range []string{`{"metadata":{"labels":{"kim-snatch.kyma-project.io\/opt-out":"tr\u0075e"}}}`, `[1,-0.5e+3,true,null,"\ud800"]`, `{"a":01}`, "\"\x01\""} {
		f.Add([]byte(s))
	}

	policy := affinity.DefaultPolicy()
	f.Fuzz(func(t *testing.T, data []byte) {
		var s scanner
		s.reset(data)
		err := s.done(s.skip())
		valid := json.Valid(data) && utf8.Valid(data)
		switch {
		case err == nil && (!valid || hasDuplicateNames(data)):
			t.Fatalf("the walk accepts %q: json.Valid and UTF-8 %v, duplicate names %v", data, valid, hasDuplicateNames(data))
		case err != nil && valid && !hasDuplicateNames(data) && !surrogateEscape.Match(data):
			t.Fatalf("the walk rejects %q, which is valid, has no duplicate names and no surrogate escape: %v", data, err)
		}
		_, _ = decodeReview(&s, data, policy.PoolLabelKey)

		typed := &corev1.Pod{}
		if json.Unmarshal(data, typed) != nil {
			return
		}
		canonical, err := json.Marshal(typed)
		if err != nil {
			return
		}
		var p podFacts
		s.reset(canonical)
		if err := decodePod(&s, policy.PoolLabelKey, &p); err != nil || s.typeErr != nil {
			t.Fatalf("decodePod(%s) = %v, type error %v", canonical, err, s.typeErr)
		}
		if want := policy.FactsOf(typed); p.facts != want {
			t.Fatalf("facts from JSON %+v, typed %+v, for %s", p.facts, want, canonical)
		}
	})
}

// surrogateEscape matches a \u escape of a UTF-16 surrogate, the only
// escape that can be invalid on its own.
var surrogateEscape = regexp.MustCompile(`\\u[dD][89a-fA-F]`)

// hasDuplicateNames reports whether an object in data, which json.Valid
// accepts, names a member twice, comparing names unescaped. It walks
// encoding/json's tokens, independently of the walk under test.
func hasDuplicateNames(data []byte) bool {
	dec := json.NewDecoder(bytes.NewReader(data))
	type frame struct {
		object  bool
		wantKey bool
		names   map[string]bool
	}
	var stack []*frame
	value := func() { // a value ended: the enclosing object wants a key
		if n := len(stack); n > 0 && stack[n-1].object {
			stack[n-1].wantKey = true
		}
	}
	for {
		tok, err := dec.Token()
		if errors.Is(err, io.EOF) || err != nil {
			return false
		}
		if n := len(stack); n > 0 && stack[n-1].object && stack[n-1].wantKey {
			if key, ok := tok.(string); ok {
				if stack[n-1].names[key] {
					return true
				}
				stack[n-1].names[key] = true
				stack[n-1].wantKey = false
				continue
			}
		}
		switch tok {
		case json.Delim('{'):
			stack = append(stack, &frame{object: true, wantKey: true, names: map[string]bool{}})
		case json.Delim('['):
			stack = append(stack, &frame{})
		case json.Delim('}'), json.Delim(']'):
			stack = stack[:len(stack)-1]
			value()
		default:
			value()
		}
	}
}

package admission

import (
	"encoding/json"
	"path/filepath"
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/kyma-project/kim-snatch/pkg/affinity"
)

// FuzzDecode holds the hand-written decoder to the standard library:
//
//   - for any bytes, the scanner accepts exactly what json.Valid accepts,
//     and decoding a review never panics;
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
		s := scanner{data: data}
		err := s.skip()
		if err == nil {
			err = s.end()
		}
		if valid := json.Valid(data); (err == nil) != valid {
			t.Fatalf("scanner error %v, json.Valid = %v for %q", err, valid, data)
		}
		_, _ = decodeReview(data, policy.PoolLabelKey)

		typed := &corev1.Pod{}
		if json.Unmarshal(data, typed) != nil {
			return
		}
		canonical, err := json.Marshal(typed)
		if err != nil {
			return
		}
		var p podFacts
		s = scanner{data: canonical}
		ok, err := decodePod(&s, policy.PoolLabelKey, &p)
		if err != nil || !ok || s.typeErr != nil {
			t.Fatalf("decodePod(%s) = %v, %v, type error %v", canonical, ok, err, s.typeErr)
		}
		if want := policy.FactsOf(typed); p.facts != want {
			t.Fatalf("facts from JSON %+v, typed %+v, for %s", p.facts, want, canonical)
		}
	})
}

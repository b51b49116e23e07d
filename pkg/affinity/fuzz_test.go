package affinity

import (
	"encoding/json"
	"path/filepath"
	"testing"

	corev1 "k8s.io/api/core/v1"
)

// FuzzMutate checks the mutation on any Pod that decodes: when Decide
// returns a patch, applying it yields exactly one term for the pool key and
// changes nothing else, and a second pass returns no patch. The corpus is
// seeded with every golden Pod in testdata/.
//
// The Pod is re-encoded before use because the API server always sends
// the canonical encoding of the typed object, never the client's bytes.
func FuzzMutate(f *testing.F) {
	files, err := filepath.Glob(filepath.Join("testdata", "*.yaml"))
	if err != nil || len(files) == 0 {
		f.Fatalf("no seeds in testdata: %v", err)
	}
	for _, file := range files {
		raw, _ := loadPod(f, filepath.Base(file))
		f.Add(raw)
	}
	m := mustMutator(f, DefaultPolicy())
	f.Fuzz(func(t *testing.T, data []byte) {
		pod := &corev1.Pod{}
		if err := json.Unmarshal(data, pod); err != nil {
			t.Skip()
		}
		canonical, err := json.Marshal(pod)
		if err != nil {
			t.Skip()
		}
		d := m.Decide(m.Policy().FactsOf(pod))
		if d.Patched() != (d.Reason == ReasonInjected) {
			t.Fatalf("reason %q with patch %s", d.Reason, d.Patch)
		}
		if d.Patched() {
			checkPatched(t, m, canonical, d)
		}
	})
}

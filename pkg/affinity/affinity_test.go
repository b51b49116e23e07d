package affinity

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	jsonpatch "gopkg.in/evanphx/json-patch.v4"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"

	"github.com/kyma-project/kim-snatch/pkg/cmdline/cmdlinetest"
	"github.com/kyma-project/kim-snatch/pkg/patch"
)

// The golden Pods in testdata carry what the decision must be, as
// annotations the decision never reads: a new case is one new file.
const (
	expectedReason = "testing.kim-snatch.kyma-project.io/expected-reason"
	expectedPatch  = "testing.kim-snatch.kyma-project.io/expected-patch"
)

func TestDecideGivesEachGoldenPodItsExpectedReasonAndPatch(t *testing.T) {
	m := mustMutator(t, DefaultPolicy())
	files, err := filepath.Glob(filepath.Join("testdata", "*.yaml"))
	if err != nil || len(files) < 10 {
		t.Fatalf("golden Pods: %v, %v", files, err)
	}
	for _, file := range files {
		t.Run(strings.TrimSuffix(filepath.Base(file), ".yaml"), func(t *testing.T) {
			raw, pod := loadPod(t, filepath.Base(file))
			want, ok := pod.Annotations[expectedReason]
			if !ok {
				t.Fatalf("%s has no annotation %s", file, expectedReason)
			}
			d := m.Decide(m.Policy().FactsOf(pod))
			if string(d.Reason) != want {
				t.Fatalf("reason = %q (%s), want %q", d.Reason, d.Message, want)
			}
			if d.Message == "" {
				t.Errorf("decision %q has no message", d.Reason)
			}
			if string(d.Patch) != pod.Annotations[expectedPatch] {
				t.Fatalf("patch =\n%s\nwant\n%s", d.Patch, pod.Annotations[expectedPatch])
			}
			if d.Patched() {
				checkPatched(t, m, raw, d)
			}
		})
	}
}

func TestDecideLetsTheFirstApplicableReasonWin(t *testing.T) {
	m := mustMutator(t, DefaultPolicy())
	tests := []struct {
		name  string
		facts Facts
		want  Reason
	}{
		{name: "bound_wins_over_opt_out", facts: Facts{Bound: true, OptedOut: true}, want: ReasonAlreadyScheduled},
		{name: "mirror_wins_over_already_set", facts: Facts{Mirror: true, PoolKeySetBy: SourceNodeSelector}, want: ReasonAlreadyScheduled},
		{name: "opt_out_wins_over_already_set", facts: Facts{OptedOut: true, PoolKeySetBy: SourceRequiredTerm}, want: ReasonOptedOut},
		{name: "preferred_term_gets_already_set", facts: Facts{PoolKeySetBy: SourcePreferredTerm, HasAffinity: true}, want: ReasonAlreadySet},
		{name: "nothing_set_is_injected", facts: Facts{}, want: ReasonInjected},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := m.Decide(tt.facts); got.Reason != tt.want {
				t.Fatalf("Decide(%+v) = %q, want %q", tt.facts, got.Reason, tt.want)
			}
		})
	}
}

func TestMutatorWithACustomPolicyAddsThatPolicysTerm(t *testing.T) {
	m := mustMutator(t, Policy{PoolLabelKey: "example.com/pool", WorkerPool: "system", Weight: 100})
	d := m.Decide(Facts{HasAffinity: true, HasNodeAffinity: true, HasPreferredTerms: true})
	want := `[{"op":"add","path":"/spec/affinity/nodeAffinity/preferredDuringSchedulingIgnoredDuringExecution/-","value":{"weight":100,"preference":{"matchExpressions":[{"key":"example.com/pool","operator":"In","values":["system"]}]}}}]`
	if string(d.Patch) != want {
		t.Fatalf("patch =\n%s\nwant\n%s", d.Patch, want)
	}
	if !strings.Contains(d.Message, "example.com/pool In [system] with weight 100") {
		t.Errorf("message %q does not name the term", d.Message)
	}
}

func TestPolicyValidateRefusesOutOfRangeWeightsAndInvalidLabels(t *testing.T) {
	tests := []struct {
		name    string
		policy  Policy
		wantErr []string
	}{
		{name: "default_is_valid", policy: DefaultPolicy()},
		{name: "weight_1_is_valid", policy: Policy{PoolLabelKey: "pool", WorkerPool: "a", Weight: 1}},
		{name: "weight_100_is_valid", policy: Policy{PoolLabelKey: "pool", WorkerPool: "a", Weight: 100}},
		{name: "weight_0_is_refused", policy: Policy{PoolLabelKey: "pool", WorkerPool: "a", Weight: 0}, wantErr: []string{"--affinity-weight must be between 1 and 100 (the API server's range), got 0"}},
		{name: "weight_101_is_refused", policy: Policy{PoolLabelKey: "pool", WorkerPool: "a", Weight: 101}, wantErr: []string{"--affinity-weight must be between 1 and 100 (the API server's range), got 101"}},
		{name: "empty_key_is_refused", policy: Policy{WorkerPool: "a", Weight: 10}, wantErr: []string{"--pool-label-key must not be empty"}},
		{name: "invalid_key_is_refused", policy: Policy{PoolLabelKey: "a b", WorkerPool: "a", Weight: 10}, wantErr: []string{`--pool-label-key "a b" is not a valid label key`}},
		{name: "empty_pool_is_refused", policy: Policy{PoolLabelKey: "pool", Weight: 10}, wantErr: []string{"--worker-pool must not be empty"}},
		{name: "invalid_pool_is_refused", policy: Policy{PoolLabelKey: "pool", WorkerPool: "-x-", Weight: 10}, wantErr: []string{`--worker-pool "-x-" is not a valid label value`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cmdlinetest.MentionsEach(t, tt.policy.Validate(), tt.wantErr)
			if len(tt.wantErr) == 0 {
				return
			}
			if _, err := NewMutator(tt.policy); err == nil {
				t.Fatal("NewMutator accepted an invalid policy")
			}
		})
	}
}

func mustMutator(t testing.TB, p Policy) *Mutator {
	t.Helper()
	m, err := NewMutator(p)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// loadPod reads a golden Pod and returns it the way the API server sends
// it: the JSON encoding of the typed object.
func loadPod(t testing.TB, file string) ([]byte, *corev1.Pod) {
	t.Helper()
	y, err := os.ReadFile(filepath.Join("testdata", file))
	if err != nil {
		t.Fatal(err)
	}
	pod := &corev1.Pod{}
	if err := yaml.UnmarshalStrict(y, pod); err != nil {
		t.Fatalf("%s: %v", file, err)
	}
	raw, err := json.Marshal(pod)
	if err != nil {
		t.Fatal(err)
	}
	return raw, pod
}

// checkPatched applies the decision's patch the way the API server does and
// checks the result: exactly one term for the pool key, which is ours, no
// other field changed, and a second pass that returns no patch.
func checkPatched(t testing.TB, m *Mutator, before []byte, d Decision) {
	t.Helper()
	decoded, err := jsonpatch.DecodePatch(d.Patch)
	if err != nil {
		t.Fatalf("decode patch %s: %v", d.Patch, err)
	}
	after, err := decoded.Apply(before)
	if err != nil {
		t.Fatalf("apply patch %s to %s: %v", d.Patch, before, err)
	}
	pod := &corev1.Pod{}
	if err := json.Unmarshal(after, pod); err != nil {
		t.Fatalf("patched Pod does not decode: %v\n%s", err, after)
	}

	p := m.Policy()
	var found []corev1.PreferredSchedulingTerm
	na := pod.Spec.Affinity.NodeAffinity
	for _, term := range na.PreferredDuringSchedulingIgnoredDuringExecution {
		if p.usedIn(term.Preference) {
			found = append(found, term)
		}
	}
	if len(found) != 1 || !reflect.DeepEqual(found[0], p.Term()) {
		t.Fatalf("patched Pod has preferred terms %+v for %s, want exactly %+v", found, p.PoolLabelKey, p.Term())
	}

	assertOnlyTheTermAdded(t, before, after, d.Patch)

	if again := m.Decide(p.FactsOf(pod)); again.Patched() || again.Reason != ReasonAlreadySet {
		t.Fatalf("second pass = %q with patch %s, want %q and no patch", again.Reason, again.Patch, ReasonAlreadySet)
	}
}

// assertOnlyTheTermAdded undoes the one addition the patch claims to make:
// what is left of after must equal before, so nothing else was changed or
// replaced.
func assertOnlyTheTermAdded(t testing.TB, before, after, patchJSON []byte) {
	t.Helper()
	var beforeDoc, afterDoc map[string]any
	mustUnmarshal(t, before, &beforeDoc)
	mustUnmarshal(t, after, &afterDoc)
	var ops []patch.Operation
	mustUnmarshal(t, patchJSON, &ops)
	if len(ops) != 1 || ops[0].Op != "add" {
		t.Fatalf("patch %s is not a single add", patchJSON)
	}
	spec := afterDoc["spec"].(map[string]any)
	switch ops[0].Path {
	case pathAffinity:
		delete(spec, "affinity")
	case pathNodeAffinity:
		delete(spec["affinity"].(map[string]any), "nodeAffinity")
	case pathPreferred:
		delete(spec["affinity"].(map[string]any)["nodeAffinity"].(map[string]any), "preferredDuringSchedulingIgnoredDuringExecution")
	case pathAppend:
		nodeAff := spec["affinity"].(map[string]any)["nodeAffinity"].(map[string]any)
		list := nodeAff["preferredDuringSchedulingIgnoredDuringExecution"].([]any)
		nodeAff["preferredDuringSchedulingIgnoredDuringExecution"] = list[:len(list)-1]
	default:
		t.Fatalf("unexpected patch path %q", ops[0].Path)
	}
	if !reflect.DeepEqual(beforeDoc, afterDoc) {
		b, _ := json.Marshal(afterDoc)
		t.Fatalf("the patch changed more than the term:\nbefore %s\nafter  %s", before, b)
	}
}

func mustUnmarshal(t testing.TB, b []byte, v any) {
	t.Helper()
	if err := json.Unmarshal(b, v); err != nil {
		t.Fatal(err)
	}
}

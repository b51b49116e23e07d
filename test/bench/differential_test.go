package bench

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
)

// The differential check's expectations, against Pods written out by hand:
// the term is appended after the Pod's own preferred terms, and nothing else
// changes.
func TestDifferentialExpectationsAppendTheTermAndKeepTheRest(t *testing.T) {
	term := corev1.PreferredSchedulingTerm{Weight: 10, Preference: corev1.NodeSelectorTerm{
		MatchExpressions: []corev1.NodeSelectorRequirement{{Key: "worker.gardener.cloud/pool", Operator: corev1.NodeSelectorOpIn, Values: []string{"cpu-worker-0"}}}}}
	cases := map[string]diffCase{}
	adds, keeps := 0, 0
	for _, c := range diffCases() {
		cases[c.name] = c
		if c.wantAdd {
			adds++
		} else {
			keeps++
		}
	}
	if adds == 0 || keeps == 0 {
		t.Fatalf("%d cases add the term and %d keep the Pod; want both kinds", adds, keeps)
	}
	tests := []struct {
		name, diffCase string
		want           *corev1.Affinity
	}{
		{name: "no_affinity_gets_the_term", diffCase: "no_affinity", want: &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{
			PreferredDuringSchedulingIgnoredDuringExecution: []corev1.PreferredSchedulingTerm{term}}}},
		{name: "required_pool_key_is_left_alone", diffCase: "required_pool_key", want: &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{
			RequiredDuringSchedulingIgnoredDuringExecution: &corev1.NodeSelector{NodeSelectorTerms: []corev1.NodeSelectorTerm{{
				MatchExpressions: []corev1.NodeSelectorRequirement{{Key: "worker.gardener.cloud/pool", Operator: corev1.NodeSelectorOpExists}}}}}}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, ok := cases[tt.diffCase]
			if !ok {
				t.Fatalf("no case %s", tt.diffCase)
			}
			in := benchPod("x")
			c.mutate(in)
			got := c.expected(in)
			if !apiequality.Semantic.DeepEqual(got.Spec.Affinity, tt.want) {
				t.Fatalf("expected affinity %+v, want %+v", got.Spec.Affinity, tt.want)
			}
		})
	}
	t.Run("other_preferred_term_keeps_order", func(t *testing.T) {
		in := benchPod("x")
		cases["other_preferred_term"].mutate(in)
		got := cases["other_preferred_term"].expected(in).Spec.Affinity.NodeAffinity.PreferredDuringSchedulingIgnoredDuringExecution
		if len(got) != 2 || got[0].Weight != 50 || !apiequality.Semantic.DeepEqual(got[1], term) {
			t.Fatalf("preferred terms %+v, want the Pod's own term first and the pool term after it", got)
		}
	})
}

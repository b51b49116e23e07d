package bench

import (
	"context"
	"errors"
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"
)

// The B/C comparison is only fair if the webhook and the policy of
// deploy/examples/policy do the same thing. differential sends the same Pods
// through both, in arm B's and arm C's namespaces, and requires that each
// comes out as the design says: with the term added, or unchanged.
//
// The expected Pod is built here from the input and a term written out by
// hand from the design (weight 10, worker.gardener.cloud/pool In
// cpu-worker-0), not from pkg/affinity, so a fault shared by the webhook's
// code and this check cannot hide.

// diffCase is one Pod and whether the term must be added to it.
type diffCase struct {
	name    string
	mutate  func(*corev1.Pod)
	wantAdd bool
}

// poolKey is the design's pool label key.
const poolKey = "worker.gardener.cloud/pool"

// designTerm is the term of the design's default policy.
func designTerm() corev1.PreferredSchedulingTerm {
	return corev1.PreferredSchedulingTerm{Weight: 10, Preference: corev1.NodeSelectorTerm{
		MatchExpressions: []corev1.NodeSelectorRequirement{{Key: poolKey, Operator: corev1.NodeSelectorOpIn, Values: []string{"cpu-worker-0"}}}}}
}

func diffCases() []diffCase {
	otherTerm := corev1.PreferredSchedulingTerm{Weight: 50, Preference: corev1.NodeSelectorTerm{
		MatchExpressions: []corev1.NodeSelectorRequirement{{Key: "topology.kubernetes.io/zone", Operator: corev1.NodeSelectorOpIn, Values: []string{"a"}}}}}
	required := func(key string) *corev1.NodeSelector {
		return &corev1.NodeSelector{NodeSelectorTerms: []corev1.NodeSelectorTerm{{
			MatchExpressions: []corev1.NodeSelectorRequirement{{Key: key, Operator: corev1.NodeSelectorOpExists}}}}}
	}
	antiAffinity := &corev1.PodAntiAffinity{PreferredDuringSchedulingIgnoredDuringExecution: []corev1.WeightedPodAffinityTerm{{
		Weight: 1, PodAffinityTerm: corev1.PodAffinityTerm{TopologyKey: "kubernetes.io/hostname",
			LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"app.kubernetes.io/name": "bench"}}}}}}
	return []diffCase{
		{name: "no_affinity", mutate: func(*corev1.Pod) {}, wantAdd: true},
		{name: "empty_affinity", mutate: func(p *corev1.Pod) { p.Spec.Affinity = &corev1.Affinity{} }, wantAdd: true},
		{name: "empty_node_affinity", mutate: func(p *corev1.Pod) {
			p.Spec.Affinity = &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{}}
		}, wantAdd: true},
		{name: "pod_anti_affinity_only", mutate: func(p *corev1.Pod) {
			p.Spec.Affinity = &corev1.Affinity{PodAntiAffinity: antiAffinity}
		}, wantAdd: true},
		{name: "other_preferred_term", mutate: func(p *corev1.Pod) {
			p.Spec.Affinity = &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{
				PreferredDuringSchedulingIgnoredDuringExecution: []corev1.PreferredSchedulingTerm{otherTerm}}}
		}, wantAdd: true},
		{name: "required_other_key", mutate: func(p *corev1.Pod) {
			p.Spec.Affinity = &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{
				RequiredDuringSchedulingIgnoredDuringExecution: required("topology.kubernetes.io/zone")}}
		}, wantAdd: true},
		{name: "node_selector_other_key", mutate: func(p *corev1.Pod) {
			p.Spec.NodeSelector = map[string]string{"kubernetes.io/os": "linux"}
		}, wantAdd: true},
		{name: "opt_out_false", mutate: func(p *corev1.Pod) { p.Labels["kim-snatch.kyma-project.io/opt-out"] = "false" }, wantAdd: true},
		{name: "node_selector_pool_key", mutate: func(p *corev1.Pod) {
			p.Spec.NodeSelector = map[string]string{poolKey: "customer-pool"}
		}},
		{name: "required_pool_key", mutate: func(p *corev1.Pod) {
			p.Spec.Affinity = &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{RequiredDuringSchedulingIgnoredDuringExecution: required(poolKey)}}
		}},
		{name: "preferred_pool_key", mutate: func(p *corev1.Pod) {
			t := designTerm()
			t.Weight, t.Preference.MatchExpressions[0].Values = 80, []string{"customer-pool"}
			p.Spec.Affinity = &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{
				PreferredDuringSchedulingIgnoredDuringExecution: []corev1.PreferredSchedulingTerm{otherTerm, t}}}
		}},
		{name: "opted_out", mutate: func(p *corev1.Pod) { p.Labels["kim-snatch.kyma-project.io/opt-out"] = "true" }},
		{name: "webhook_own_pod", mutate: func(p *corev1.Pod) { p.Labels["app.kubernetes.io/name"] = "snatch-webhook" }},
		{name: "bound", mutate: func(p *corev1.Pod) { p.Spec.NodeName = "node-1" }},
		// A mirror Pod in a Kyma-managed namespace: the webhook is called
		// (there is no matchCondition) and leaves it alone, as it is bound.
		{name: "mirror", mutate: func(p *corev1.Pod) {
			p.Spec.NodeName = "node-1"
			p.Annotations[corev1.MirrorPodAnnotationKey] = "checksum"
			p.Spec.AutomountServiceAccountToken = ptr.To(false)
		}},
	}
}

// expected is what the design says the created Pod's scheduling fields are.
func (c diffCase) expected(in *corev1.Pod) *corev1.Pod {
	out := in.DeepCopy()
	if !c.wantAdd {
		return out
	}
	if out.Spec.Affinity == nil {
		out.Spec.Affinity = &corev1.Affinity{}
	}
	if out.Spec.Affinity.NodeAffinity == nil {
		out.Spec.Affinity.NodeAffinity = &corev1.NodeAffinity{}
	}
	na := out.Spec.Affinity.NodeAffinity
	na.PreferredDuringSchedulingIgnoredDuringExecution = append(na.PreferredDuringSchedulingIgnoredDuringExecution, designTerm())
	return out
}

// differential creates every case's Pod in both namespaces and returns the
// number of cases that came out as expected in both, or what differed.
func differential(ctx context.Context, cs kubernetes.Interface, webhookNS, policyNS string) (int, error) {
	var errs []error
	agreed := 0
	for _, c := range diffCases() {
		in := benchPod("diff-" + strings.ReplaceAll(c.name, "_", "-"))
		c.mutate(in)
		want := c.expected(in)
		ok := true
		for _, ns := range []string{webhookNS, policyNS} {
			got, err := cs.CoreV1().Pods(ns).Create(ctx, in.DeepCopy(), metav1.CreateOptions{})
			if err != nil {
				errs = append(errs, fmt.Errorf("%s in %s: create: %w", c.name, ns, err))
				ok = false
				continue
			}
			if !sameScheduling(got, want) {
				errs = append(errs, fmt.Errorf("%s in %s: got nodeName %q, nodeSelector %v, affinity %+v; want %q, %v, %+v",
					c.name, ns, got.Spec.NodeName, got.Spec.NodeSelector, got.Spec.Affinity,
					want.Spec.NodeName, want.Spec.NodeSelector, want.Spec.Affinity))
				ok = false
			}
		}
		if ok {
			agreed++
		}
	}
	for _, ns := range []string{webhookNS, policyNS} {
		if err := deletePods(ctx, cs, ns); err != nil {
			errs = append(errs, err)
		}
	}
	return agreed, errors.Join(errs...)
}

// sameScheduling compares the fields either mutation could touch.
func sameScheduling(got, want *corev1.Pod) bool {
	return got.Spec.NodeName == want.Spec.NodeName &&
		apiequality.Semantic.DeepEqual(got.Spec.NodeSelector, want.Spec.NodeSelector) &&
		apiequality.Semantic.DeepEqual(got.Spec.Affinity, want.Spec.Affinity)
}

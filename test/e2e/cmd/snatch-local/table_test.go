package main

import (
	"github.com/kyma-project/kim-snatch/test/framework"
	"reflect"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kyma-project/kim-snatch/pkg/affinity"
)

func TestTableAlignsColumnsAndShowsNoneForMissingValues(t *testing.T) {
	framework.InTier(t, framework.Smoke, "no node: make run's table")
	framework.Shares(t)
	tests := []struct {
		name string
		rows []Row
		want string
	}{
		{
			name: "header_only_without_rows",
			want: "POD   NAMESPACE   TERM   NODE   POOL\n",
		},
		{
			name: "aligns_columns_and_names_the_term",
			rows: []Row{
				{Pod: "demo-7d9f-abcde", Namespace: "kyma-demo", Term: true, Node: "cpu-worker-0-1", Pool: "cpu-worker-0"},
				{Pod: "demo-5c4b-x", Namespace: "customer-demo", Node: "customer-pool-3", Pool: "customer-pool"},
			},
			want: "" +
				"POD               NAMESPACE       TERM       NODE              POOL\n" +
				"demo-7d9f-abcde   kyma-demo       injected   cpu-worker-0-1    cpu-worker-0\n" +
				"demo-5c4b-x       customer-demo   none       customer-pool-3   customer-pool\n",
		},
		{
			name: "unbound_pod_shows_none_for_node_and_pool",
			rows: []Row{{Pod: "p", Namespace: "ns"}},
			want: "" +
				"POD   NAMESPACE   TERM   NODE     POOL\n" +
				"p     ns          none   <none>   <none>\n",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var b strings.Builder
			if err := writeTable(&b, tt.rows); err != nil {
				t.Fatal(err)
			}
			if b.String() != tt.want {
				t.Errorf("table:\n%s\nwant:\n%s", b.String(), tt.want)
			}
		})
	}
}

func pod(ns, name, node string, terms ...corev1.PreferredSchedulingTerm) corev1.Pod {
	p := corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}, Spec: corev1.PodSpec{NodeName: node}}
	if terms != nil {
		p.Spec.Affinity = &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{PreferredDuringSchedulingIgnoredDuringExecution: terms}}
	}
	return p
}

func TestRowsMarkOnlyTheWebhooksTermAndSortPodsWithinNamespaces(t *testing.T) {
	framework.InTier(t, framework.Smoke, "no node: make run's table")
	framework.Shares(t)
	injected := affinity.DefaultPolicy().Term()
	otherPool := affinity.DefaultPolicy()
	otherPool.WorkerPool = "gpu"
	otherWeight := affinity.DefaultPolicy()
	otherWeight.Weight = 50
	unrelated := corev1.PreferredSchedulingTerm{Weight: 1, Preference: corev1.NodeSelectorTerm{
		MatchExpressions: []corev1.NodeSelectorRequirement{{Key: "zone", Operator: corev1.NodeSelectorOpIn, Values: []string{"a"}}},
	}}
	pools := map[string]string{"k1": "cpu-worker-0", "c1": "customer-pool"}

	tests := []struct {
		name string
		pods []corev1.Pod
		want []Row
	}{
		{
			name: "injected_term_among_others_counts",
			pods: []corev1.Pod{pod("kyma", "a", "k1", unrelated, injected)},
			want: []Row{{Pod: "a", Namespace: "kyma", Term: true, Node: "k1", Pool: "cpu-worker-0"}},
		},
		{
			name: "a_term_for_another_pool_or_weight_is_not_the_webhooks",
			pods: []corev1.Pod{pod("kyma", "a", "k1", otherPool.Term()), pod("kyma", "b", "k1", otherWeight.Term())},
			want: []Row{
				{Pod: "a", Namespace: "kyma", Node: "k1", Pool: "cpu-worker-0"},
				{Pod: "b", Namespace: "kyma", Node: "k1", Pool: "cpu-worker-0"},
			},
		},
		{
			name: "no_affinity_and_unknown_node_show_none",
			pods: []corev1.Pod{pod("cust", "a", "gone"), pod("cust", "b", "")},
			want: []Row{{Pod: "a", Namespace: "cust", Node: "gone"}, {Pod: "b", Namespace: "cust"}},
		},
		{
			name: "keeps_namespace_order_and_sorts_pods_within",
			pods: []corev1.Pod{pod("kyma", "z", "k1"), pod("cust", "b", "c1"), pod("kyma", "a", "k1"), pod("cust", "a", "c1")},
			want: []Row{
				{Pod: "a", Namespace: "kyma", Node: "k1", Pool: "cpu-worker-0"},
				{Pod: "z", Namespace: "kyma", Node: "k1", Pool: "cpu-worker-0"},
				{Pod: "a", Namespace: "cust", Node: "c1", Pool: "customer-pool"},
				{Pod: "b", Namespace: "cust", Node: "c1", Pool: "customer-pool"},
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := rowsOf(tt.pods, pools); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("rows %+v, want %+v", got, tt.want)
			}
		})
	}
}

func TestSummaryCountsTermsAndPoolsAndReportsMisplacedTerms(t *testing.T) {
	framework.InTier(t, framework.Smoke, "no node: make run's table")
	framework.Shares(t)
	managed := map[string]bool{"kyma": true, "cust": false}
	tests := []struct {
		name         string
		rows         []Row
		wantLines    []string
		wantProblems []string
	}{
		{
			name: "as_expected_reports_no_problem",
			rows: []Row{
				{Pod: "a", Namespace: "kyma", Term: true, Pool: "cpu-worker-0"},
				{Pod: "b", Namespace: "kyma", Term: true, Pool: "cpu-worker-0"},
				{Pod: "a", Namespace: "cust", Pool: "customer-pool"},
				{Pod: "b", Namespace: "cust", Pool: "cpu-worker-0"},
				{Pod: "c", Namespace: "cust"},
			},
			wantLines: []string{
				"kyma: 2 of 2 Pods carry the term; pools: cpu-worker-0=2",
				"cust: 0 of 3 Pods carry the term; pools: <none>=1 cpu-worker-0=1 customer-pool=1",
			},
		},
		{
			name: "reports_a_missing_and_a_stray_term",
			rows: []Row{
				{Pod: "a", Namespace: "kyma", Pool: "customer-pool"},
				{Pod: "b", Namespace: "cust", Term: true, Pool: "cpu-worker-0"},
			},
			wantLines: []string{
				"kyma: 0 of 1 Pods carry the term; pools: customer-pool=1",
				"cust: 1 of 1 Pods carry the term; pools: cpu-worker-0=1",
			},
			wantProblems: []string{
				"kyma/a lacks the term although its namespace is Kyma-managed",
				"cust/b carries the term although its namespace is not Kyma-managed",
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			lines, problems := summarize(tt.rows, managed)
			if !reflect.DeepEqual(lines, tt.wantLines) {
				t.Errorf("lines %q, want %q", lines, tt.wantLines)
			}
			if !reflect.DeepEqual(problems, tt.wantProblems) {
				t.Errorf("problems %q, want %q", problems, tt.wantProblems)
			}
		})
	}
}

package check_test

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/kyma-project/kim-snatch/pkg/check"
	"github.com/kyma-project/kim-snatch/pkg/check/checktest"
)

func TestKymaPoolFailsWhenMissingAndWarnsWithoutRoom(t *testing.T) {
	now := time.Now()
	runChecklist(t, now, []string{check.IDKymaPool}, []checklistCase{
		{
			name:        "kyma_pool_reports_its_room",
			extra:       []runtime.Object{withTerm(requesting("kyma-system", "app-1", "cpu-worker-0-2", "1500m", "3Gi")), requesting("shop", "web-1", "customer-1", "2", "1Gi")},
			wantMessage: map[string][]string{check.IDKymaPool: {"pool cpu-worker-0 (the default): 2 Nodes, 2 Ready and schedulable", "CPU requested 1500m of 8 allocatable, memory 3Gi of 32Gi"}},
		},
		{
			name: "kyma_pool_missing_fails_naming_the_pools_present",
			mutate: func(_ *testing.T, in *checktest.Install) {
				in.Nodes = []*corev1.Node{checktest.PoolNode("customer-1", "customer"), checktest.PoolNode("customer-2", "customer"), checktest.PoolNode("infra-1", "infra")}
				in.SyncerPod.Spec.NodeName = "customer-1"
			},
			// Without the pool the syncer, a Kyma Pod, runs off it.
			want: map[string]check.Status{check.IDKymaPool: check.StatusFail, check.IDPlacement: check.StatusWarn},
			wantMessage: map[string][]string{
				check.IDKymaPool:  {"no Node carries worker.gardener.cloud/pool=cpu-worker-0", "--worker-pool", "pools present: customer (2), infra (1)"},
				check.IDPlacement: {"0 lack the term, 1 carry it but run off pool cpu-worker-0 (pool missing: 1)"},
			},
		},
		{
			name: "kyma_pool_of_the_webhook_pods_flag_is_the_one_checked",
			mutate: func(_ *testing.T, in *checktest.Install) {
				for _, p := range in.WebhookPods {
					p.Spec.Containers[0].Args = []string{"--cert-dir=/certs", "--worker-pool=cpu-worker-9"}
				}
			},
			react:       admitTerms(poolTerm("cpu-worker-9", 10)),
			want:        map[string]check.Status{check.IDKymaPool: check.StatusFail},
			wantMessage: map[string][]string{check.IDKymaPool: {"pool=cpu-worker-9", "from Pod snatch-webhook-", "pools present: cpu-worker-0 (2)"}},
		},
		{
			// The binary takes the value as the next argument too.
			name: "kyma_pool_flag_with_a_separate_value_is_the_one_checked",
			mutate: func(_ *testing.T, in *checktest.Install) {
				for _, p := range in.WebhookPods {
					p.Spec.Containers[0].Args = []string{"--cert-dir", "/certs", "--worker-pool", "cpu-worker-9"}
				}
			},
			react:       admitTerms(poolTerm("cpu-worker-9", 10)),
			want:        map[string]check.Status{check.IDKymaPool: check.StatusFail},
			wantMessage: map[string][]string{check.IDKymaPool: {"pool=cpu-worker-9", "from Pod snatch-webhook-", "pools present: cpu-worker-0 (2)"}},
		},
		{
			name: "kyma_pool_without_a_schedulable_node_warns",
			mutate: func(_ *testing.T, in *checktest.Install) {
				in.Nodes[0].Spec.Unschedulable = true
				in.Nodes[1].Status.Conditions[0].Status = corev1.ConditionFalse
			},
			want:        map[string]check.Status{check.IDKymaPool: check.StatusWarn},
			wantMessage: map[string][]string{check.IDKymaPool: {"2 Nodes, 0 Ready and schedulable"}},
		},
		{
			name: "kyma_pool_tainted_nodes_are_not_room",
			mutate: func(_ *testing.T, in *checktest.Install) {
				in.Nodes[0].Spec.Taints = []corev1.Taint{{Key: "dedicated", Value: "gpu", Effect: corev1.TaintEffectNoSchedule}}
				in.Nodes[1].Spec.Taints = []corev1.Taint{{Key: "soft", Effect: corev1.TaintEffectPreferNoSchedule}}
			},
			wantMessage: map[string][]string{check.IDKymaPool: {"2 Nodes, 1 Ready and schedulable; 1 Ready but tainted, not room for Kyma Pods: cpu-worker-0-1 (dedicated=gpu:NoSchedule)"}},
		},
		{
			name: "kyma_pool_with_every_node_tainted_warns",
			mutate: func(_ *testing.T, in *checktest.Install) {
				in.Nodes[0].Spec.Taints = []corev1.Taint{{Key: "dedicated", Value: "gpu", Effect: corev1.TaintEffectNoSchedule}}
				in.Nodes[1].Spec.Taints = []corev1.Taint{{Key: "draining", Effect: corev1.TaintEffectNoExecute}}
			},
			want:        map[string]check.Status{check.IDKymaPool: check.StatusWarn},
			wantMessage: map[string][]string{check.IDKymaPool: {"2 Nodes, 0 Ready and schedulable; 2 Ready but tainted", "cpu-worker-0-2 (draining:NoExecute)"}},
		},
		{
			name:        "kyma_pool_nodes_forbidden_skips",
			react:       deny("list", "nodes", forbidden("nodes")),
			want:        map[string]check.Status{check.IDKymaPool: check.StatusSkip},
			wantMessage: map[string][]string{check.IDKymaPool: {"may not list Nodes"}},
		},
	})
}

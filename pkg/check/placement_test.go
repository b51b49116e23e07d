package check

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"
	"k8s.io/utils/ptr"
)

// The objects of these tests are written out here, not taken from the
// code under test or from checktest, so that the expectations follow from
// how each case built them.
const (
	plPoolKey = "worker.gardener.cloud/pool"
	plPool    = "cpu-worker-0"
	plRoomNow = "pool has room now (it was full or missing when the Pod was scheduled)"
)

// placementCase is one run of checkPlacement against a fake cluster.
type placementCase struct {
	name string
	// nodes replaces the default: kyma-1 and kyma-2 of the pool
	// (4 CPU, 8Gi each) and customer-1 of pool customer.
	nodes []*corev1.Node
	pods  []*corev1.Pod
	react func(cs *fake.Clientset)
	want  Status
	// wantMessage lists strings the message must contain; wantOnce
	// strings it must contain exactly once.
	wantMessage, wantOnce []string
	wantDetails           []string
	wantRemediation       []string
}

// Kyma Pods without the webhook's term, or with it but off the pool, warn
// with the cause; the item never writes to the cluster.
func TestPlacementWarnsOfKymaPodsOffThePoolNamingTheCause(t *testing.T) {
	tests := []placementCase{
		{
			name: "healthy_passes",
			pods: []*corev1.Pod{
				plPod("kyma-system", "app-5f6d7c8b9-abcde", "kyma-1", plRS("app-5f6d7c8b9", "5f6d7c8b9"), plTerm(plPool)),
				plPod("istio-system", "proxy-0", "kyma-2", plOwner("StatefulSet", "proxy"), plTerm(plPool)),
				plPod("istio-system", "pending", "", plTerm(plPool)),
			},
			want:        StatusPass,
			wantMessage: []string{"3 Kyma Pods in 2 namespaces; all carry the term, and all bound ones run on pool cpu-worker-0"},
		},
		{
			name: "deployment_pods_without_the_term_warn_naming_the_deployment_once",
			pods: []*corev1.Pod{
				plPod("kyma-system", "api-7d9f8c6b5-abcde", "kyma-1", plRS("api-7d9f8c6b5", "7d9f8c6b5")),
				plPod("kyma-system", "api-7d9f8c6b5-fghij", "customer-1", plRS("api-7d9f8c6b5", "7d9f8c6b5")),
				plPod("kyma-system", "ok", "kyma-1", plTerm(plPool)),
			},
			want:        StatusWarn,
			wantMessage: []string{"3 Kyma Pods in 2 namespaces: 2 lack the term (Deployment kyma-system/api), 0 carry it but run off pool cpu-worker-0"},
			wantOnce:    []string{"Deployment kyma-system/api"},
			wantDetails: []string{
				"lacks the term: kyma-system/api-7d9f8c6b5-abcde (owner Deployment kyma-system/api)",
				"lacks the term: kyma-system/api-7d9f8c6b5-fghij (owner Deployment kyma-system/api)",
			},
			wantRemediation: []string{"Once the webhook is healthy", "kubectl -n kyma-system rollout restart deployment/api"},
		},
		{
			name: "other_owners_are_named_as_they_are",
			pods: []*corev1.Pod{
				plPod("kyma-system", "db-0", "kyma-1", plOwner("StatefulSet", "db")),
				plPod("kyma-system", "migrate-x7k2p", "", plOwner("Job", "migrate")),
				plPod("istio-system", "debug", "kyma-2"),
				plPod("istio-system", "rs-abc12", "kyma-2", plOwner("ReplicaSet", "rs")),
				plPod("istio-system", "odd-abc12", "kyma-2", plRS("odd", "9z9z9z")),
				plPod("istio-system", "cr-0", "kyma-2", plOwner("Gateway", "cr")),
			},
			want:        StatusWarn,
			wantMessage: []string{"6 lack the term", "0 carry it but run off pool cpu-worker-0"},
			wantDetails: []string{
				"lacks the term: istio-system/cr-0 (owner Gateway istio-system/cr)",
				"lacks the term: istio-system/debug (owner bare Pod istio-system/debug)",
				"lacks the term: istio-system/odd-abc12 (owner ReplicaSet istio-system/odd)",
				"lacks the term: istio-system/rs-abc12 (owner ReplicaSet istio-system/rs)",
				"lacks the term: kyma-system/db-0 (owner StatefulSet kyma-system/db)",
				"lacks the term: kyma-system/migrate-x7k2p (owner Job kyma-system/migrate)",
			},
			wantRemediation: []string{"kubectl -n kyma-system rollout restart statefulset/db", "Job kyma-system/migrate", "and 1 more"},
		},
		{
			name: "pods_the_item_does_not_judge_are_not_counted",
			pods: []*corev1.Pod{
				plPod("kyma-system", "ok", "kyma-1", plTerm(plPool)),
				plPod("kyma-system", "opted-out", "customer-1", plLabel("kim-snatch.kyma-project.io/opt-out", "true")),
				plPod("kyma-system", "agent-x2k4q", "customer-1", plOwner("DaemonSet", "agent")),
				plPod("kyma-system", "static-customer-1", "customer-1", func(p *corev1.Pod) { p.Annotations = map[string]string{"kubernetes.io/config.mirror": "x"} }),
				plPod("kyma-system", "done", "customer-1", plPhase(corev1.PodSucceeded)),
				plPod("kyma-system", "crashed", "customer-1", plPhase(corev1.PodFailed)),
				plPod("kyma-system", "leaving", "customer-1", func(p *corev1.Pod) {
					p.DeletionTimestamp, p.Finalizers = ptr.To(metav1.Now()), []string{"test/keep"}
				}),
				plPod("shop", "web", "customer-1"),
				plPod("kube-system", "coredns", "customer-1"),
				plPod("kyma-system", "snatch-webhook-1", "customer-1", plLabel("app.kubernetes.io/name", "snatch-webhook")),
				plPod("kyma-system", "pinned", "customer-1", func(p *corev1.Pod) { p.Spec.NodeSelector = map[string]string{plPoolKey: "customer"} }),
				plPod("kyma-system", "required", "customer-1", func(p *corev1.Pod) {
					p.Spec.Affinity = &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{RequiredDuringSchedulingIgnoredDuringExecution: &corev1.NodeSelector{
						NodeSelectorTerms: []corev1.NodeSelectorTerm{{MatchExpressions: []corev1.NodeSelectorRequirement{{Key: plPoolKey, Operator: corev1.NodeSelectorOpIn, Values: []string{"customer"}}}}},
					}}}
				}),
				plPod("kyma-system", "prefers-customer", "customer-1", plTerm("customer")),
			},
			want:        StatusPass,
			wantMessage: []string{"1 Kyma Pods in 2 namespaces; all carry the term, and all bound ones run on pool cpu-worker-0; 3 more choose their pool themselves"},
		},
		{
			name:        "pending_pod_with_the_term_is_not_off_pool",
			nodes:       []*corev1.Node{plNode("customer-1", "customer", "4", "8Gi")},
			pods:        []*corev1.Pod{plPod("kyma-system", "waiting", "", plTerm(plPool))},
			want:        StatusPass,
			wantMessage: []string{"1 Kyma Pods in 2 namespaces; all carry the term"},
		},
		{
			name:  "off_pool_warns_pool_missing",
			nodes: []*corev1.Node{plNode("customer-1", "customer", "4", "8Gi")},
			pods:  []*corev1.Pod{plPod("kyma-system", "app-5f6d7c8b9-abcde", "customer-1", plRS("app-5f6d7c8b9", "5f6d7c8b9"), plTerm(plPool))},
			want:  StatusWarn,
			wantMessage: []string{
				"1 Kyma Pods in 2 namespaces: 0 lack the term, 1 carry it but run off pool cpu-worker-0 (pool missing: 1)",
			},
			wantDetails:     []string{"off pool: kyma-system/app-5f6d7c8b9-abcde on node customer-1 (pool customer): pool missing; owner Deployment kyma-system/app"},
			wantRemediation: []string{"Make room in pool cpu-worker-0", `"Spill-over" in docs/operations.md`, "deploy/examples/descheduler", "kubectl -n kyma-system rollout restart deployment/app"},
		},
		{
			name: "off_pool_warns_pool_not_schedulable",
			nodes: []*corev1.Node{
				plNode("kyma-1", plPool, "4", "8Gi", func(n *corev1.Node) { n.Spec.Unschedulable = true }),
				plNode("kyma-2", plPool, "4", "8Gi", func(n *corev1.Node) { n.Status.Conditions[0].Status = corev1.ConditionFalse }),
				plNode("customer-1", "customer", "4", "8Gi"),
			},
			pods:        []*corev1.Pod{plPod("kyma-system", "a", "customer-1", plTerm(plPool))},
			want:        StatusWarn,
			wantMessage: []string{"1 carry it but run off pool cpu-worker-0 (pool not schedulable: 1)"},
			wantDetails: []string{"off pool: kyma-system/a on node customer-1 (pool customer): pool not schedulable; owner bare Pod kyma-system/a"},
		},
		{
			name: "off_pool_warns_the_taint_unless_tolerated",
			nodes: []*corev1.Node{
				plNode("kyma-1", plPool, "4", "8Gi", plTaint("dedicated", "infra", corev1.TaintEffectNoSchedule)),
				plNode("kyma-2", plPool, "4", "8Gi", plTaint("dedicated", "infra", corev1.TaintEffectNoExecute)),
				plNode("customer-1", "customer", "4", "8Gi"),
			},
			pods: []*corev1.Pod{
				plPod("kyma-system", "a", "customer-1", plTerm(plPool)),
				plPod("kyma-system", "b", "customer-1", plTerm(plPool), func(p *corev1.Pod) {
					p.Spec.Tolerations = []corev1.Toleration{{Key: "dedicated", Operator: corev1.TolerationOpEqual, Value: "infra"}}
				}),
			},
			want:        StatusWarn,
			wantMessage: []string{"2 carry it but run off pool cpu-worker-0 (", plRoomNow + ": 1", "taint dedicated=infra:NoSchedule: 1"},
			wantDetails: []string{
				"off pool: kyma-system/a on node customer-1 (pool customer): taint dedicated=infra:NoSchedule; owner bare Pod kyma-system/a",
				"off pool: kyma-system/b on node customer-1 (pool customer): " + plRoomNow + "; owner bare Pod kyma-system/b",
			},
		},
		{
			name: "off_pool_warns_pool_full_by_cpu_or_memory",
			nodes: []*corev1.Node{
				plNode("kyma-1", plPool, "2", "4Gi"),
				plNode("kyma-2", plPool, "2", "4Gi", plTaint("soft", "", corev1.TaintEffectPreferNoSchedule)),
				plNode("customer-1", "customer", "4", "8Gi"),
			},
			pods: []*corev1.Pod{
				plPod("kyma-system", "cpu-hog", "kyma-1", plTerm(plPool), plRequests("1500m", "1Gi")),
				plPod("shop", "memory-hog", "kyma-2", plRequests("500m", "3500Mi")),
				plPod("kyma-system", "spilled", "customer-1", plTerm(plPool), plRequests("1", "1Gi")),
			},
			want:        StatusWarn,
			wantMessage: []string{"1 carry it but run off pool cpu-worker-0 (pool full: 1)"},
			wantDetails: []string{"off pool: kyma-system/spilled on node customer-1 (pool customer): pool full; owner bare Pod kyma-system/spilled"},
		},
		{
			// The finished Pod's requests no longer occupy kyma-1.
			name: "off_pool_warns_room_now",
			nodes: []*corev1.Node{
				plNode("kyma-1", plPool, "2", "4Gi"),
				plNode("customer-1", "customer", "4", "8Gi"),
				plNode("unlabelled-1", "", "4", "8Gi"),
			},
			pods: []*corev1.Pod{
				plPod("kyma-system", "batch", "kyma-1", plTerm(plPool), plRequests("2", "4Gi"), plPhase(corev1.PodSucceeded)),
				plPod("kyma-system", "spilled", "unlabelled-1", plTerm(plPool), plRequests("1", "1Gi")),
			},
			want:        StatusWarn,
			wantMessage: []string{"1 Kyma Pods in 2 namespaces: 0 lack the term, 1 carry it but run off pool cpu-worker-0 (" + plRoomNow + ": 1)"},
			wantDetails: []string{"off pool: kyma-system/spilled on node unlabelled-1 (pool none): " + plRoomNow + "; owner bare Pod kyma-system/spilled"},
		},
		{
			name:        "off_pool_on_a_gone_node_warns_unknown",
			pods:        []*corev1.Pod{plPod("kyma-system", "orphan", "vanished-1", plTerm(plPool))},
			want:        StatusWarn,
			wantMessage: []string{"1 carry it but run off pool cpu-worker-0 (unknown (the Node no longer exists): 1)"},
			wantDetails: []string{"off pool: kyma-system/orphan on node vanished-1 (Node gone): unknown (the Node no longer exists); owner bare Pod kyma-system/orphan"},
		},
		{
			name: "both_kinds_together_warn_naming_each",
			pods: []*corev1.Pod{
				plPod("kyma-system", "old", "kyma-1"),
				plPod("istio-system", "spilled", "customer-1", plTerm(plPool)),
			},
			want:        StatusWarn,
			wantMessage: []string{"2 Kyma Pods in 2 namespaces: 1 lack the term (bare Pod kyma-system/old), 1 carry it but run off pool cpu-worker-0 (" + plRoomNow + ": 1)"},
			wantDetails: []string{
				"lacks the term: kyma-system/old (owner bare Pod kyma-system/old)",
				"off pool: istio-system/spilled on node customer-1 (pool customer): " + plRoomNow + "; owner bare Pod istio-system/spilled",
			},
			wantRemediation: []string{"Once the webhook is healthy", "bare Pod kyma-system/old", "Make room in pool cpu-worker-0", "bare Pod istio-system/spilled"},
		},
		{
			name: "the_webhook_pods_worker_pool_decides",
			pods: []*corev1.Pod{
				plPod("kyma-system", "snatch-webhook-5c8d7f9b6-abcde", "kyma-1", plLabel("app.kubernetes.io/name", "snatch-webhook"), func(p *corev1.Pod) {
					p.Spec.Containers[0].Args = []string{"--cert-dir=/certs", "--worker-pool=pool-b"}
				}),
				plPod("kyma-system", "on-b", "b-1", plTerm("pool-b")),
				plPod("kyma-system", "on-default", "kyma-1", plTerm("pool-b")),
				plPod("kyma-system", "old-term", "kyma-2", plTerm(plPool)),
			},
			nodes: []*corev1.Node{
				plNode("kyma-1", plPool, "4", "8Gi"),
				plNode("kyma-2", plPool, "4", "8Gi"),
				plNode("b-1", "pool-b", "4", "8Gi"),
			},
			want:        StatusWarn,
			wantMessage: []string{"2 Kyma Pods in 2 namespaces: 0 lack the term, 1 carry it but run off pool pool-b (" + plRoomNow + ": 1); 1 more choose their pool themselves"},
			wantDetails: []string{"off pool: kyma-system/on-default on node kyma-1 (pool cpu-worker-0): " + plRoomNow + "; owner bare Pod kyma-system/on-default"},
		},
		{
			name:  "pods_forbidden_skips",
			react: plFail("list", "pods", plForbidden("pods")),
			want:  StatusSkip,
			wantMessage: []string{
				"these credentials may not list Pods, so this was not checked",
			},
		},
		{
			name:        "pods_unreadable_fails",
			react:       plFail("list", "pods", errors.New("connection reset\nby peer")),
			want:        StatusFail,
			wantMessage: []string{"could not read Pods: connection reset by peer"},
		},
		{
			name:        "namespaces_forbidden_skips",
			react:       plFail("list", "namespaces", plForbidden("namespaces")),
			want:        StatusSkip,
			wantMessage: []string{"may not list Namespaces"},
		},
		{
			// get is allowed, list is not: the Pod's Node says it is off
			// the pool, but the pool cannot be judged.
			name:  "pool_nodes_not_listable_leaves_the_cause_unknown",
			react: plFail("list", "nodes", plForbidden("nodes")),
			pods: []*corev1.Pod{
				plPod("kyma-system", "old", "kyma-1"),
				plPod("kyma-system", "on-pool", "kyma-1", plTerm(plPool)),
				plPod("kyma-system", "spilled", "customer-1", plTerm(plPool)),
			},
			want:        StatusWarn,
			wantMessage: []string{"3 Kyma Pods in 2 namespaces: 1 lack the term (bare Pod kyma-system/old), 1 carry it but run off pool cpu-worker-0 (unknown (Nodes not readable): 1)"},
			wantDetails: []string{
				"lacks the term: kyma-system/old (owner bare Pod kyma-system/old)",
				"off pool: kyma-system/spilled on node customer-1 (pool customer): unknown (Nodes not readable); owner bare Pod kyma-system/spilled",
			},
		},
		{
			name: "nodes_unreadable_still_counts_pods_without_the_term",
			react: func(cs *fake.Clientset) {
				plFail("list", "nodes", plForbidden("nodes"))(cs)
				plFail("get", "nodes", plForbidden("nodes"))(cs)
			},
			pods: []*corev1.Pod{
				plPod("kyma-system", "old", "kyma-1"),
				plPod("kyma-system", "spilled", "customer-1", plTerm(plPool)),
			},
			// What was found is reported, but part of the item was not seen.
			want:        StatusSkip,
			wantMessage: []string{"1 lack the term", "0 carry it but run off pool cpu-worker-0", "; 1 bound Pods with the term not judged, their Nodes could not be read", "forbidden"},
			wantDetails: []string{"lacks the term: kyma-system/old (owner bare Pod kyma-system/old)"},
		},
		{
			name: "nodes_unreadable_alone_skips",
			react: func(cs *fake.Clientset) {
				plFail("list", "nodes", plForbidden("nodes"))(cs)
				plFail("get", "nodes", plForbidden("nodes"))(cs)
			},
			pods:        []*corev1.Pod{plPod("kyma-system", "spilled", "customer-1", plTerm(plPool))},
			want:        StatusSkip,
			wantMessage: []string{"1 bound Pods with the term not judged"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, cs := runPlacement(tt)
			assertPlacement(t, tt, got)
			for _, a := range cs.Actions() {
				if v := a.GetVerb(); v != "get" && v != "list" {
					t.Errorf("the check wrote to the cluster: %s %s", v, a.GetResource().Resource)
				}
			}
		})
	}
}

// runPlacement runs checkPlacement against the case's Pods and Nodes, with
// namespaces of Kyma and of a customer beside them.
func runPlacement(tt placementCase) (Result, *fake.Clientset) {
	nodes := tt.nodes
	if nodes == nil {
		nodes = []*corev1.Node{plNode("kyma-1", plPool, "4", "8Gi"), plNode("kyma-2", plPool, "4", "8Gi"), plNode("customer-1", "customer", "4", "8Gi")}
	}
	objects := []runtime.Object{
		plNamespace("kyma-system", true), plNamespace("istio-system", true), plNamespace("shop", false), plNamespace("kube-system", true),
	}
	for _, n := range nodes {
		objects = append(objects, n)
	}
	for _, p := range tt.pods {
		objects = append(objects, p)
	}
	cs := fake.NewClientset(objects...)
	if tt.react != nil {
		tt.react(cs)
	}
	cfg := Config{
		Namespace:       "kyma-system",
		WebhookSelector: labels.SelectorFromSet(labels.Set{"app.kubernetes.io/name": "snatch-webhook"}),
		PoolLabelKey:    plPoolKey,
		WorkerPool:      plPool,
	}
	return checkPlacement(context.Background(), cs, cfg), cs
}

// assertPlacement holds the result to the case: its status, message,
// details and remediation.
func assertPlacement(t *testing.T, tt placementCase, got Result) {
	t.Helper()
	if got.ID != IDPlacement || got.Status != tt.want {
		t.Errorf("result = %s %s (%s), want %s %s", got.ID, got.Status, got.Message, IDPlacement, tt.want)
	}
	if strings.Contains(got.Message, "\n") {
		t.Errorf("message spans lines: %q", got.Message)
	}
	for _, s := range tt.wantMessage {
		if !strings.Contains(got.Message, s) {
			t.Errorf("message %q\ndoes not contain %q", got.Message, s)
		}
	}
	for _, s := range tt.wantOnce {
		if n := strings.Count(got.Message, s); n != 1 {
			t.Errorf("message %q contains %q %d times, want once", got.Message, s, n)
		}
	}
	if !slices.Equal(got.Details, tt.wantDetails) {
		t.Errorf("details =\n%s\nwant\n%s", strings.Join(got.Details, "\n"), strings.Join(tt.wantDetails, "\n"))
	}
	if (got.Status == StatusPass) != (got.Remediation == "") || strings.Contains(got.Remediation, "\n") {
		t.Errorf("remediation %q does not fit status %s", got.Remediation, got.Status)
	}
	for _, s := range tt.wantRemediation {
		if !strings.Contains(got.Remediation, s) {
			t.Errorf("remediation %q\ndoes not contain %q", got.Remediation, s)
		}
	}
}

func plNamespace(name string, managed bool) *corev1.Namespace {
	l := map[string]string{corev1.LabelMetadataName: name}
	if managed {
		l["operator.kyma-project.io/managed-by"] = "kyma"
	}
	return &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: l}}
}

// plNode is a Ready Node of pool (no pool label when pool is empty) with
// the allocatable cpu and memory.
func plNode(name, pool, cpu, memory string, change ...func(*corev1.Node)) *corev1.Node {
	n := &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"kubernetes.io/hostname": name}},
		Status: corev1.NodeStatus{
			Conditions:  []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue}},
			Allocatable: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpu), corev1.ResourceMemory: resource.MustParse(memory)},
		},
	}
	if pool != "" {
		n.Labels[plPoolKey] = pool
	}
	for _, c := range change {
		c(n)
	}
	return n
}

func plTaint(key, value string, effect corev1.TaintEffect) func(*corev1.Node) {
	return func(n *corev1.Node) {
		n.Spec.Taints = append(n.Spec.Taints, corev1.Taint{Key: key, Value: value, Effect: effect})
	}
}

// plPod is a Running Pod on node (Pending when node is empty) with one
// container and no affinity.
func plPod(namespace, name, node string, change ...func(*corev1.Pod)) *corev1.Pod {
	p := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name},
		Spec:       corev1.PodSpec{NodeName: node, Containers: []corev1.Container{{Name: "main", Image: "registry.invalid/" + name}}},
		Status:     corev1.PodStatus{Phase: corev1.PodRunning},
	}
	if node == "" {
		p.Status.Phase = corev1.PodPending
	}
	for _, c := range change {
		c(p)
	}
	return p
}

// plTerm adds the term the webhook adds, for pool.
func plTerm(pool string) func(*corev1.Pod) {
	return func(p *corev1.Pod) {
		p.Spec.Affinity = &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{
			PreferredDuringSchedulingIgnoredDuringExecution: []corev1.PreferredSchedulingTerm{{
				Weight:     10,
				Preference: corev1.NodeSelectorTerm{MatchExpressions: []corev1.NodeSelectorRequirement{{Key: plPoolKey, Operator: corev1.NodeSelectorOpIn, Values: []string{pool}}}},
			}},
		}}
	}
}

func plOwner(kind, name string) func(*corev1.Pod) {
	return func(p *corev1.Pod) {
		p.OwnerReferences = append(p.OwnerReferences, metav1.OwnerReference{APIVersion: "apps/v1", Kind: kind, Name: name, UID: types.UID("uid-" + name), Controller: ptr.To(true)})
	}
}

// plRS makes the Pod one of ReplicaSet rs with the pod-template-hash label.
func plRS(rs, hash string) func(*corev1.Pod) {
	return func(p *corev1.Pod) {
		plOwner("ReplicaSet", rs)(p)
		plLabel("pod-template-hash", hash)(p)
	}
}

func plLabel(key, value string) func(*corev1.Pod) {
	return func(p *corev1.Pod) {
		if p.Labels == nil {
			p.Labels = map[string]string{}
		}
		p.Labels[key] = value
	}
}

func plPhase(phase corev1.PodPhase) func(*corev1.Pod) {
	return func(p *corev1.Pod) { p.Status.Phase = phase }
}

func plRequests(cpu, memory string) func(*corev1.Pod) {
	return func(p *corev1.Pod) {
		p.Spec.Containers[0].Resources.Requests = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpu), corev1.ResourceMemory: resource.MustParse(memory)}
	}
}

func plForbidden(resource string) error {
	return apierrors.NewForbidden(schema.GroupResource{Resource: resource}, "", errors.New("no RBAC"))
}

// plFail makes every verb on resource fail with err.
func plFail(verb, resource string, err error) func(*fake.Clientset) {
	return func(cs *fake.Clientset) {
		cs.PrependReactor(verb, resource, func(k8stesting.Action) (bool, runtime.Object, error) { return true, nil, err })
	}
}

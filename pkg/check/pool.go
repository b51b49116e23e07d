package check

import (
	"cmp"
	"context"
	"maps"
	"slices"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/kyma-project/kim-snatch/pkg/affinity"
)

// poolFacts are what kyma-pool found: the pool the webhook prefers, its
// Nodes, those that take Pods, and its room; without Nodes, the pools
// that exist.
type poolFacts struct {
	Config
	Pool, PoolPod     string // PoolPod is where the pool was read, "" for the default
	Present           []poolSize
	Members, Usable   int
	Tainted           []taintedNode
	RoomErr           error
	CPURequested      *resource.Quantity
	CPUAllocatable    *resource.Quantity
	MemoryRequested   *resource.Quantity
	MemoryAllocatable *resource.Quantity
}

// poolSize is a pool and its number of Nodes.
type poolSize struct {
	Name  string
	Nodes int
}

// taintedNode is a Ready Node that a taint bars Kyma Pods from.
type taintedNode struct{ Name, Taint string }

// checkKymaPool finds the pool the webhook's term prefers: a --worker-pool
// that names no pool gives a term that matches nothing, and every Kyma Pod
// silently lands on a customer pool.
func checkKymaPool(ctx context.Context, client kubernetes.Interface, cfg Config) Result {
	return decideKymaPool(ctx, client, cfg).result(IDKymaPool)
}

func decideKymaPool(ctx context.Context, client kubernetes.Interface, cfg Config) found {
	facts := poolFacts{Config: cfg}
	facts.Pool, facts.PoolPod = webhookPool(ctx, client, cfg)
	nodes, err := client.CoreV1().Nodes().List(ctx, metav1.ListOptions{LabelSelector: cfg.PoolLabelKey})
	if res, failed := unreadable("list Nodes", "Nodes", err); failed {
		return res
	}
	members, pools := facts.count(nodes.Items)
	if len(members) == 0 {
		for _, name := range slices.Sorted(maps.Keys(pools)) {
			facts.Present = append(facts.Present, poolSize{name, pools[name]})
		}
		return judged(StatusFail, keyPoolMissing, facts)
	}
	facts.room(ctx, client, members)
	if facts.Usable == 0 {
		return judged(StatusWarn, keyPoolNoRoom, facts)
	}
	return judged(StatusPass, keyPoolRoom, facts)
}

// count counts the Nodes of every pool and those of the Kyma pool that
// take Pods, and returns the Kyma pool's Nodes.
func (f *poolFacts) count(nodes []corev1.Node) (members []*corev1.Node, pools map[string]int) {
	pools = map[string]int{}
	for i := range nodes {
		n := &nodes[i]
		pools[n.Labels[f.PoolLabelKey]]++
		if n.Labels[f.PoolLabelKey] != f.Pool {
			continue
		}
		members = append(members, n)
		switch t := barringTaint(n); {
		case !schedulable(n):
		case t != nil:
			f.Tainted = append(f.Tainted, taintedNode{n.Name, t.ToString()})
		default:
			f.Usable++
		}
	}
	f.Members = len(members)
	slices.SortFunc(f.Tainted, func(a, b taintedNode) int {
		return cmp.Or(cmp.Compare(a.Name, b.Name), cmp.Compare(a.Taint, b.Taint))
	})
	return members, pools
}

// webhookPool returns the running webhooks' --worker-pool and the Pod it
// was read from, or cfg.WorkerPool and "" when none is read.
func webhookPool(ctx context.Context, client kubernetes.Interface, cfg Config) (pool, pod string) {
	list, err := client.CoreV1().Pods(cfg.Namespace).List(ctx, webhookPods(cfg))
	if err == nil {
		for _, p := range list.Items {
			for _, c := range p.Spec.Containers {
				if v, ok := affinity.WorkerPoolFromArgs(c.Args); ok {
					return v, p.Name
				}
			}
		}
	}
	return cfg.WorkerPool, ""
}

// room sums the requests of the Pods on the pool's Nodes, as the scheduler
// counts them, against their allocatable resources. It is extra information:
// unread Pods leave the pool's existence to decide the item.
func (f *poolFacts) room(ctx context.Context, client kubernetes.Interface, members []*corev1.Node) {
	byNode, err := requestsOn(ctx, client, members)
	if f.RoomErr = err; err != nil {
		return
	}
	allocatable, requested := corev1.ResourceList{}, corev1.ResourceList{}
	for _, n := range members {
		addResources(allocatable, n.Status.Allocatable)
		addResources(requested, byNode[n.Name])
	}
	f.CPURequested, f.CPUAllocatable = requested.Cpu(), allocatable.Cpu()
	f.MemoryRequested, f.MemoryAllocatable = requested.Memory(), allocatable.Memory()
}

func addResources(sum, add corev1.ResourceList) {
	for name, q := range add {
		v := sum[name]
		v.Add(q)
		sum[name] = v
	}
}

// barringTaint returns n's first NoSchedule or NoExecute taint, or nil.
// The rule is simple on purpose, without the tolerations of any one Pod:
// Kyma's module Pods do not, as a rule, tolerate such taints (the
// tolerations the API server adds to every Pod are for not-ready and
// unreachable Nodes, which are not Ready anyway), so a Node that has one
// is no room for them. A PreferNoSchedule taint still takes them.
func barringTaint(n *corev1.Node) *corev1.Taint {
	i := slices.IndexFunc(n.Spec.Taints, func(t corev1.Taint) bool {
		return t.Effect == corev1.TaintEffectNoSchedule || t.Effect == corev1.TaintEffectNoExecute
	})
	if i < 0 {
		return nil
	}
	return &n.Spec.Taints[i]
}

// schedulable reports whether n is Ready and not cordoned.
func schedulable(n *corev1.Node) bool {
	i := slices.IndexFunc(n.Status.Conditions, func(c corev1.NodeCondition) bool { return c.Type == corev1.NodeReady })
	return i >= 0 && n.Status.Conditions[i].Status == corev1.ConditionTrue && !n.Spec.Unschedulable
}

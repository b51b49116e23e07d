package check

import (
	"context"
	"fmt"
	"slices"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/kyma-project/kim-snatch/pkg/affinity"
)

// checkKymaPool finds the pool the webhook's term prefers: a --worker-pool
// that names no pool gives a term that matches nothing, and every Kyma Pod
// silently lands on a customer pool.
func checkKymaPool(ctx context.Context, client kubernetes.Interface, cfg Config) Result {
	pool, from := webhookPool(ctx, client, cfg)
	nodes, err := client.CoreV1().Nodes().List(ctx, metav1.ListOptions{LabelSelector: cfg.PoolLabelKey})
	if res, failed := unreadable(IDKymaPool, "list Nodes", "Nodes", err); failed {
		return res
	}
	var members []*corev1.Node
	var tainted []string
	pools, usable := map[string]int{}, 0
	for i := range nodes.Items {
		n := &nodes.Items[i]
		pools[n.Labels[cfg.PoolLabelKey]]++
		if n.Labels[cfg.PoolLabelKey] == pool {
			members = append(members, n)
			switch t := barringTaint(n); {
			case !schedulable(n):
			case t != nil:
				tainted = append(tainted, n.Name+" ("+t.ToString()+")")
			default:
				usable++
			}
		}
	}
	if len(members) == 0 {
		var present []string
		for name, n := range pools {
			present = append(present, fmt.Sprintf("%s (%d)", name, n))
		}
		slices.Sort(present)
		if len(present) == 0 {
			present = []string{"none (no Node has the label)"}
		}
		return fail(IDKymaPool, fmt.Sprintf("no Node carries %s=%s (the webhook's --worker-pool, %s); pools present: %s", cfg.PoolLabelKey, pool, from, listNames(present)),
			"Set the webhook's --worker-pool to the Kyma pool's name (kubectl get nodes -L "+cfg.PoolLabelKey+
				"), or add the Kyma worker pool to the Shoot. Until then the term matches no node.")
	}
	slices.Sort(tainted)
	msg := fmt.Sprintf("pool %s (%s): %d Nodes, %d Ready and schedulable", pool, from, len(members), usable)
	if len(tainted) > 0 {
		msg += fmt.Sprintf("; %d Ready but tainted, not room for Kyma Pods: %s", len(tainted), listNames(tainted))
	}
	msg += "; " + poolRoom(ctx, client, members)
	if usable == 0 {
		return warn(IDKymaPool, msg, "No Node of the Kyma pool takes Pods: check them with kubectl describe nodes -l "+cfg.PoolLabelKey+"="+pool+" (NotReady, cordoned, or tainted NoSchedule or NoExecute).")
	}
	return pass(IDKymaPool, msg)
}

// webhookPool returns the running webhooks' --worker-pool, or cfg.WorkerPool
// when none is read, and its source.
func webhookPool(ctx context.Context, client kubernetes.Interface, cfg Config) (pool, from string) {
	list, err := client.CoreV1().Pods(cfg.Namespace).List(ctx, metav1.ListOptions{LabelSelector: cfg.WebhookSelector.String()})
	if err == nil {
		for _, p := range list.Items {
			for _, c := range p.Spec.Containers {
				if v, ok := affinity.WorkerPoolFromArgs(c.Args); ok {
					return v, "from Pod " + p.Name
				}
			}
		}
	}
	return cfg.WorkerPool, "the default"
}

// poolRoom sums the requests of the Pods on the pool's Nodes, as the scheduler
// counts them, against their allocatable resources. It is extra information:
// unread Pods leave the pool's existence to decide the item.
func poolRoom(ctx context.Context, client kubernetes.Interface, members []*corev1.Node) string {
	byNode, err := requestsOn(ctx, client, members)
	if err != nil {
		return "requests not read: " + err.Error()
	}
	allocatable, requested := corev1.ResourceList{}, corev1.ResourceList{}
	for _, n := range members {
		addResources(allocatable, n.Status.Allocatable)
		addResources(requested, byNode[n.Name])
	}
	return fmt.Sprintf("CPU requested %s of %s allocatable, memory %s of %s",
		requested.Cpu(), allocatable.Cpu(), requested.Memory(), allocatable.Memory())
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

package check

import (
	"context"
	"fmt"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/client-go/kubernetes"
	resourcehelper "k8s.io/component-helpers/resource"

	"github.com/kyma-project/kim-snatch/pkg/affinity"
)

// checkKymaPool answers whether the pool that the webhook's term prefers
// exists: a --worker-pool that names no pool gives a term that matches
// nothing, and every Kyma Pod silently lands on a customer pool. It names
// the pools that do exist, and shows the pool's room (requested against
// allocatable CPU and memory) so that "the pool is full" is visible too.
//
// The pool is the one the running webhooks were given (--worker-pool in
// their Pods' arguments) when the Pods can be read, otherwise
// cfg.WorkerPool.
func checkKymaPool(ctx context.Context, client kubernetes.Interface, cfg Config) Result {
	pool, from := webhookPool(ctx, client, cfg)
	nodes, err := client.CoreV1().Nodes().List(ctx, metav1.ListOptions{LabelSelector: cfg.PoolLabelKey})
	switch {
	case apierrors.IsForbidden(err):
		return notPermitted(IDKymaPool, "list Nodes", err)
	case err != nil:
		return readFailure(IDKymaPool, "Nodes", err)
	}
	pools := map[string]int{}
	var members []*corev1.Node
	for i := range nodes.Items {
		n := &nodes.Items[i]
		pools[n.Labels[cfg.PoolLabelKey]]++
		if n.Labels[cfg.PoolLabelKey] == pool {
			members = append(members, n)
		}
	}
	if len(members) == 0 {
		return Result{
			ID:     IDKymaPool,
			Status: StatusFail,
			Message: fmt.Sprintf("no Node carries %s=%s (the webhook's --worker-pool, %s); pools present: %s",
				cfg.PoolLabelKey, pool, from, describePools(pools)),
			Remediation: "Set the webhook's --worker-pool to the Kyma pool's name (kubectl get nodes -L " + cfg.PoolLabelKey +
				"), or add the Kyma worker pool to the Shoot. Until then the term matches no node.",
		}
	}
	var usable []string
	for _, n := range members {
		if nodeReady(n) && !n.Spec.Unschedulable {
			usable = append(usable, n.Name)
		}
	}
	// The room is extra information: when the Pods cannot be listed, the
	// pool's existence still decides the item.
	room, err := poolRoom(ctx, client, members)
	if err != nil {
		room = oneLine("requests not read: " + err.Error())
	}
	msg := fmt.Sprintf("pool %s (%s): %d Nodes, %d Ready and schedulable; %s", pool, from, len(members), len(usable), room)
	if len(usable) == 0 {
		return Result{
			ID:          IDKymaPool,
			Status:      StatusWarn,
			Message:     msg,
			Remediation: "No Node of the Kyma pool takes Pods: check them with kubectl describe nodes -l " + cfg.PoolLabelKey + "=" + pool + " (NotReady, cordoned).",
		}
	}
	return Result{ID: IDKymaPool, Status: StatusPass, Message: msg}
}

// webhookPool returns the pool the webhook Pods were started with, and
// where that came from.
func webhookPool(ctx context.Context, client kubernetes.Interface, cfg Config) (pool, from string) {
	list, err := client.CoreV1().Pods(cfg.Namespace).List(ctx, metav1.ListOptions{LabelSelector: cfg.WebhookSelector.String()})
	if err == nil {
		for _, p := range list.Items {
			for _, c := range p.Spec.Containers {
				for _, a := range c.Args {
					if v, ok := strings.CutPrefix(a, "--"+affinity.FlagWorkerPool+"="); ok {
						return v, "from Pod " + p.Name
					}
				}
			}
		}
	}
	return cfg.WorkerPool, "the default"
}

// poolRoom sums the requests of the Pods that occupy the pool's Nodes, as
// the scheduler counts them, against the Nodes' allocatable resources.
func poolRoom(ctx context.Context, client kubernetes.Interface, members []*corev1.Node) (string, error) {
	allocatable := corev1.ResourceList{}
	in := map[string]bool{}
	for _, n := range members {
		in[n.Name] = true
		addResources(allocatable, n.Status.Allocatable)
	}
	pods, err := client.CoreV1().Pods("").List(ctx, metav1.ListOptions{
		FieldSelector: fields.AndSelectors(
			fields.OneTermNotEqualSelector("spec.nodeName", ""),
			fields.OneTermNotEqualSelector("status.phase", string(corev1.PodSucceeded)),
			fields.OneTermNotEqualSelector("status.phase", string(corev1.PodFailed)),
		).String(),
	})
	if err != nil {
		return "", err
	}
	requested := corev1.ResourceList{}
	for i := range pods.Items {
		if p := &pods.Items[i]; in[p.Spec.NodeName] {
			addResources(requested, resourcehelper.PodRequests(p, resourcehelper.PodResourcesOptions{}))
		}
	}
	return fmt.Sprintf("CPU requested %s of %s allocatable, memory %s of %s",
		quantity(requested, corev1.ResourceCPU), quantity(allocatable, corev1.ResourceCPU),
		quantity(requested, corev1.ResourceMemory), quantity(allocatable, corev1.ResourceMemory)), nil
}

func addResources(sum, add corev1.ResourceList) {
	for name, q := range add {
		v := sum[name]
		v.Add(q)
		sum[name] = v
	}
}

// quantity prints one resource with a percentage-free, exact value.
func quantity(l corev1.ResourceList, name corev1.ResourceName) string {
	q, ok := l[name]
	if !ok {
		q = resource.Quantity{}
	}
	return q.String()
}

// nodeReady reports whether a Node's Ready condition is True.
func nodeReady(n *corev1.Node) bool {
	for _, c := range n.Status.Conditions {
		if c.Type == corev1.NodeReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// describePools lists pool names with their Node counts, or says there are
// none.
func describePools(pools map[string]int) string {
	if len(pools) == 0 {
		return "none (no Node has the label)"
	}
	var out []string
	for name, n := range pools {
		out = append(out, fmt.Sprintf("%s (%d)", name, n))
	}
	slices.Sort(out)
	return listNames(out)
}

package check

import (
	"cmp"
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/go-logr/logr"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/kubernetes"
	resourcehelper "k8s.io/component-helpers/resource"
	schedulingcorev1 "k8s.io/component-helpers/scheduling/corev1"

	"github.com/kyma-project/kim-snatch/pkg/affinity"
)

// checkPlacement counts the Kyma Pods as the rule kim_snatch:kyma_pod_pool:info
// does, the webhook's own aside ("Spill-over" in docs/operations.md). It warns
// at most: a preferred term that fails open allows both faults.
func checkPlacement(ctx context.Context, client kubernetes.Interface, cfg Config) Result {
	pool, _ := webhookPool(ctx, client, cfg)
	nsList, err := client.CoreV1().Namespaces().List(ctx, metav1.ListOptions{
		LabelSelector: ManagedByLabel + "=" + ManagedByValue + "," + corev1.LabelMetadataName + "!=" + metav1.NamespaceSystem,
	})
	if res, failed := unreadable(IDPlacement, "list Namespaces", "Namespace list", err); failed {
		return res
	}
	nodes, err := newPoolNodes(ctx, client, cfg.PoolLabelKey, pool)
	if res, failed := unreadable(IDPlacement, "list Pods", "Pods", err); failed {
		return res
	}
	c := placementCount{cfg: cfg, pool: pool, managed: map[string]bool{}, nodes: nodes,
		lackOwners: map[string]podOwner{}, offOwners: map[string]podOwner{}, causes: map[string]int{}}
	for _, ns := range nsList.Items {
		c.managed[ns.Name] = true
	}
	// Every Pod, a page at a time: the rule counts the Kyma Pods across the
	// cluster, and a list per managed namespace would be judged by
	// different permissions.
	err = eachPod(ctx, client, "", metav1.ListOptions{}, c.add)
	if res, failed := unreadable(IDPlacement, "list Pods", "Pods", err); failed {
		return res
	}
	slices.Sort(c.details)
	return c.result()
}

// placementCount counts the Kyma Pods by what the webhook did and where they run.
type placementCount struct {
	cfg     Config
	pool    string
	managed map[string]bool // the namespaces the webhook's namespaceSelector selects
	nodes   *poolNodes

	total, own, lack, off, unjudged int
	unjudgedErr                     error
	details                         []string
	lackOwners, offOwners           map[string]podOwner
	causes                          map[string]int // of the Pods off the pool
}

// add counts one Pod, if it is a Kyma Pod the webhook is asked about.
func (c *placementCount) add(p *corev1.Pod) {
	facts := affinity.Policy{PoolLabelKey: c.cfg.PoolLabelKey, WorkerPool: c.pool}.FactsOf(p)
	ctrl := metav1.GetControllerOf(p)
	if !c.managed[p.Namespace] || p.DeletionTimestamp != nil || p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed ||
		facts.OptedOut || facts.Mirror || (ctrl != nil && ctrl.Kind == "DaemonSet") ||
		(p.Namespace == c.cfg.Namespace && c.cfg.WebhookSelector.Matches(labels.Set(p.Labels))) {
		return
	}
	owner := ownerOf(p, ctrl)
	_, hasTerm := preferredTerm(p, c.cfg.PoolLabelKey, func(e corev1.NodeSelectorRequirement) bool {
		return e.Operator == corev1.NodeSelectorOpIn && slices.Contains(e.Values, c.pool)
	})
	switch {
	case facts.PoolKeySetBy == affinity.SourceNone:
		c.total++
		c.lack++
		c.lackOwners[owner.String()] = owner
		c.details = append(c.details, fmt.Sprintf("lacks the term: %s/%s (owner %s)", p.Namespace, p.Name, owner))
	case facts.PoolKeySetBy != affinity.SourcePreferredTerm || !hasTerm:
		c.own++
	default:
		c.total++
		if p.Spec.NodeName != "" {
			c.judge(p, owner)
		}
	}
}

// judge counts a bound Pod with the term if it runs off the pool.
func (c *placementCount) judge(p *corev1.Pod, owner podOwner) {
	node, err := c.nodes.get(p.Spec.NodeName)
	if err != nil {
		c.unjudged, c.unjudgedErr = c.unjudged+1, err
		return
	}
	if node != nil && node.Labels[c.cfg.PoolLabelKey] == c.pool {
		return
	}
	where, cause := "Node gone", "unknown (the Node no longer exists)"
	if node != nil {
		where, cause = "pool "+cmp.Or(node.Labels[c.cfg.PoolLabelKey], "none"), c.nodes.spillCause(p)
	}
	c.off++
	c.offOwners[owner.String()] = owner
	c.causes[cause]++
	c.details = append(c.details, fmt.Sprintf("off pool: %s/%s on node %s (%s): %s; owner %s", p.Namespace, p.Name, p.Spec.NodeName, where, cause, owner))
}

// result skips when only unreadable Nodes stand in the way of a verdict.
func (c *placementCount) result() Result {
	msg := fmt.Sprintf("%d Kyma Pods in %d namespaces", c.total, len(c.managed))
	suffix := ""
	if c.own > 0 {
		suffix = fmt.Sprintf("; %d more choose their pool themselves", c.own)
	}
	if c.lack == 0 && c.off == 0 && c.unjudged == 0 {
		return pass(IDPlacement, msg+"; all carry the term, and all bound ones run on pool "+c.pool+suffix)
	}
	var remediation []string
	msg += fmt.Sprintf(": %d lack the term", c.lack)
	if c.lack > 0 {
		msg += " (" + listNames(slices.Sorted(maps.Keys(c.lackOwners))) + ")"
		remediation = append(remediation, "Once the webhook is healthy, recreate the Pods without the term through their owners: "+restartHint(c.lackOwners)+".")
	}
	msg += fmt.Sprintf(", %d carry it but run off pool %s", c.off, c.pool)
	if c.off > 0 {
		var summary []string
		for cause, n := range c.causes {
			summary = append(summary, fmt.Sprintf("%s: %d", cause, n))
		}
		slices.Sort(summary)
		msg += " (" + strings.Join(summary, ", ") + ")"
		remediation = append(remediation, fmt.Sprintf("Make room in pool %s (see the causes), then recreate the Pods off the pool (%s) or let the descheduler evict them: see \"Spill-over\" in docs/operations.md and deploy/examples/descheduler.",
			c.pool, restartHint(c.offOwners)))
	}
	status := StatusWarn
	if c.unjudged > 0 {
		// Part of the item was not seen: what was found is reported, but
		// the item is not judged (notPermitted's rule).
		suffix += fmt.Sprintf("; %d bound Pods with the term not judged, their Nodes could not be read: %v", c.unjudged, c.unjudgedErr)
		status = StatusSkip
		remediation = append([]string{"Run check with a kubeconfig that may get and list Nodes to include this item."}, remediation...)
	}
	res := result(IDPlacement, status, msg+suffix, strings.Join(remediation, " "))
	res.Details = c.details
	return res
}

// podOwner is what recreates a Pod: its controller, or the Pod itself.
type podOwner struct{ kind, namespace, name string }

func (o podOwner) String() string { return o.kind + " " + o.namespace + "/" + o.name }

// ownerOf resolves a Pod's controller. A ReplicaSet is reported as its
// Deployment, as the Deployment controller names it: the ReplicaSet's name is
// the Deployment's, "-", and the pod-template-hash.
func ownerOf(p *corev1.Pod, ctrl *metav1.OwnerReference) podOwner {
	if ctrl == nil {
		return podOwner{"bare Pod", p.Namespace, p.Name}
	}
	if hash := p.Labels[appsv1.DefaultDeploymentUniqueLabelKey]; ctrl.Kind == "ReplicaSet" && hash != "" {
		if name, ok := strings.CutSuffix(ctrl.Name, "-"+hash); ok && name != "" {
			return podOwner{"Deployment", p.Namespace, name}
		}
	}
	return podOwner{ctrl.Kind, p.Namespace, ctrl.Name}
}

// restartHint names what recreates the Pods of owners, as a command where it can.
func restartHint(owners map[string]podOwner) string {
	var cmds, others []string
	for _, key := range slices.Sorted(maps.Keys(owners)) {
		if o := owners[key]; o.kind == "Deployment" || o.kind == "StatefulSet" {
			cmds = append(cmds, fmt.Sprintf("kubectl -n %s rollout restart %s/%s", o.namespace, strings.ToLower(o.kind), o.name))
		} else {
			others = append(others, key)
		}
	}
	return listNames(append(cmds, others...))
}

// poolNodes holds the pool's Nodes, read once, and finds the Nodes Pods run on.
type poolNodes struct {
	get       func(name string) (*corev1.Node, error) // nil for a Node gone
	members   []*corev1.Node
	err       error                          // why members could not be read
	requested map[string]corev1.ResourceList // by Node, of the Pods bound to it
}

// newPoolNodes reads the pool's Nodes and the requests of the Pods on them.
// Nodes that cannot be read are pn.err, for the Pods to be judged without
// them; its error is the Pods' that could not be read.
func newPoolNodes(ctx context.Context, client kubernetes.Interface, key, pool string) (*poolNodes, error) {
	pn := &poolNodes{}
	nodes, errs := map[string]*corev1.Node{}, map[string]error{} // each Node read; nil for one gone
	list, err := client.CoreV1().Nodes().List(ctx, metav1.ListOptions{LabelSelector: key + "=" + pool})
	if pn.err = err; err == nil {
		for i := range list.Items {
			pn.members = append(pn.members, &list.Items[i])
			nodes[list.Items[i].Name] = &list.Items[i]
		}
	}
	if pn.requested, err = requestsOn(ctx, client, pn.members); err != nil {
		return nil, err
	}
	// A Pod on a Node outside the pool, or on any Node when the pool's could
	// not be listed, needs its Node: one read per Node.
	pn.get = func(name string) (*corev1.Node, error) {
		if node, ok := nodes[name]; ok {
			return node, errs[name]
		}
		node, err := client.CoreV1().Nodes().Get(ctx, name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			node, err = nil, nil
		}
		nodes[name], errs[name] = node, err
		return node, err
	}
	return pn, nil
}

// spillCause judges why a Pod with the term would not be placed on the
// pool now, in the scheduler's order: Nodes, then taints, then room.
func (pn *poolNodes) spillCause(p *corev1.Pod) string {
	if pn.err != nil {
		return "unknown (Nodes not readable)"
	}
	if len(pn.members) == 0 {
		return "pool missing"
	}
	hard := func(t *corev1.Taint) bool {
		return t.Effect == corev1.TaintEffectNoSchedule || t.Effect == corev1.TaintEffectNoExecute
	}
	var usable, open, taint = 0, 0, ""
	request := resourcehelper.PodRequests(p, resourcehelper.PodResourcesOptions{})
	for _, n := range pn.members {
		if !schedulable(n) {
			continue
		}
		usable++
		if t, found := schedulingcorev1.FindMatchingUntoleratedTaint(logr.Discard(), n.Spec.Taints, p.Spec.Tolerations, hard, false); found {
			taint = cmp.Or(taint, "taint "+t.ToString())
			continue
		}
		open++
		if fits(request, n.Status.Allocatable, pn.requested[n.Name]) {
			return "pool has room now (it was full or missing when the Pod was scheduled)"
		}
	}
	switch {
	case usable == 0:
		return "pool not schedulable"
	case open == 0:
		return taint
	}
	return "pool full"
}

// fits reports whether request fits into a Node's unrequested CPU and memory.
func fits(request, allocatable, requested corev1.ResourceList) bool {
	for _, name := range []corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory} {
		free := allocatable[name].DeepCopy()
		free.Sub(requested[name])
		if r := request[name]; r.Cmp(free) > 0 {
			return false
		}
	}
	return true
}

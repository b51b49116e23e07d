package check

import (
	"cmp"
	"context"
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

// placementFacts are what placement found: the Kyma Pods counted, those
// without the term and those off the pool, with their owners and causes.
type placementFacts struct {
	Config
	Pool                              string
	Total, Namespaces, Own, Lack, Off int
	Unjudged                          int // bound Pods whose Node could not be read
	UnjudgedErr                       error
	LackOwners, OffOwners             []podOwner
	Causes                            map[spill]int // of the Pods off the pool
}

// placedPod is a Kyma Pod that lacks the term or runs off the pool: one
// line of placement's details.
type placedPod struct {
	Namespace, Name string
	Owner           podOwner
	Lacks           bool
	Node, NodePool  string
	Cause           spill
}

// checkPlacement counts the Kyma Pods as the rule kim_snatch:kyma_pod_pool:info
// does, the webhook's own aside ("Spill-over" in docs/operations.md). It warns
// at most: a preferred term that fails open allows both faults.
func checkPlacement(ctx context.Context, client kubernetes.Interface, cfg Config) Result {
	return decidePlacement(ctx, client, cfg).result(IDPlacement)
}

func decidePlacement(ctx context.Context, client kubernetes.Interface, cfg Config) found {
	pool, _ := webhookPool(ctx, client, cfg)
	nsList, err := client.CoreV1().Namespaces().List(ctx, metav1.ListOptions{
		LabelSelector: ManagedByLabel + "=" + ManagedByValue + "," + corev1.LabelMetadataName + "!=" + metav1.NamespaceSystem,
	})
	if res, failed := unreadable("list Namespaces", "Namespace list", err); failed {
		return res
	}
	nodes, err := newPoolNodes(ctx, client, cfg.PoolLabelKey, pool)
	if res, failed := unreadable("list Pods", "Pods", err); failed {
		return res
	}
	c := placementCount{placementFacts: placementFacts{Config: cfg, Pool: pool, Causes: map[spill]int{}},
		managed: map[string]bool{}, nodes: nodes, lackOwners: map[podOwner]bool{}, offOwners: map[podOwner]bool{}}
	for _, ns := range nsList.Items {
		c.managed[ns.Name] = true
	}
	// Every Pod, a page at a time: the rule counts the Kyma Pods across the
	// cluster, and a list per managed namespace would be judged by
	// different permissions.
	err = eachPod(ctx, client, "", metav1.ListOptions{}, c.add)
	if res, failed := unreadable("list Pods", "Pods", err); failed {
		return res
	}
	return c.judge()
}

// placementCount counts the Kyma Pods by what the webhook did and where they run.
type placementCount struct {
	placementFacts
	managed               map[string]bool // the namespaces the webhook's namespaceSelector selects
	nodes                 *poolNodes
	details               []any
	lackOwners, offOwners map[podOwner]bool
}

// add counts one Pod, if it is a Kyma Pod the webhook is asked about.
func (c *placementCount) add(p *corev1.Pod) {
	facts := affinity.Policy{PoolLabelKey: c.PoolLabelKey, WorkerPool: c.Pool}.FactsOf(p)
	ctrl := metav1.GetControllerOf(p)
	if !c.managed[p.Namespace] || p.DeletionTimestamp != nil || p.Status.Phase == corev1.PodSucceeded ||
		p.Status.Phase == corev1.PodFailed || facts.OptedOut || facts.Mirror || (ctrl != nil && ctrl.Kind == "DaemonSet") ||
		(p.Namespace == c.Namespace && c.WebhookSelector.Matches(labels.Set(p.Labels))) {
		return
	}
	owner := ownerOf(p, ctrl)
	hasTerm := hasPreferredTerm(p, c.PoolLabelKey, func(e corev1.NodeSelectorRequirement) bool {
		return e.Operator == corev1.NodeSelectorOpIn && slices.Contains(e.Values, c.Pool)
	})
	switch {
	case facts.PoolKeySetBy == affinity.SourceNone:
		c.Total++
		c.Lack++
		c.lackOwners[owner] = true
		c.details = append(c.details, placedPod{Namespace: p.Namespace, Name: p.Name, Owner: owner, Lacks: true})
	case facts.PoolKeySetBy != affinity.SourcePreferredTerm || !hasTerm:
		c.Own++
	default:
		c.Total++
		if p.Spec.NodeName != "" {
			c.place(p, owner)
		}
	}
}

// place counts a bound Pod with the term if it runs off the pool.
func (c *placementCount) place(p *corev1.Pod, owner podOwner) {
	node, err := c.nodes.get(p.Spec.NodeName)
	if err != nil {
		c.Unjudged, c.UnjudgedErr = c.Unjudged+1, err
		return
	}
	if node != nil && node.Labels[c.PoolLabelKey] == c.Pool {
		return
	}
	placed := placedPod{Namespace: p.Namespace, Name: p.Name, Owner: owner, Node: p.Spec.NodeName}
	placed.Cause = spill{Kind: spillGone}
	if node != nil {
		placed.NodePool, placed.Cause = node.Labels[c.PoolLabelKey], c.nodes.spillCause(p)
	}
	c.Off++
	c.offOwners[owner] = true
	c.Causes[placed.Cause]++
	c.details = append(c.details, placed)
}

// judge skips when only unreadable Nodes stand in the way of a verdict.
func (c *placementCount) judge() found {
	c.Namespaces = len(c.managed)
	c.LackOwners, c.OffOwners = sortedOwners(c.lackOwners), sortedOwners(c.offOwners)
	status, key := StatusPass, keyPlacementAllOn
	switch {
	case c.Unjudged > 0:
		// Part of the item was not seen: what was found is reported, but
		// the item is not judged (unreadable's rule).
		status, key = StatusSkip, keyPlacementOff
	case c.Lack > 0 || c.Off > 0:
		status, key = StatusWarn, keyPlacementOff
	}
	f := judged(status, key, c.placementFacts)
	f.details = c.details
	return f
}

// podOwner is what recreates a Pod: its controller, or the Pod itself.
type podOwner struct{ kind, namespace, name string }

// sortedOwners returns owners in the order of their names.
func sortedOwners(owners map[podOwner]bool) []podOwner {
	return slices.SortedFunc(maps.Keys(owners), func(a, b podOwner) int { return strings.Compare(a.String(), b.String()) })
}

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

// spill is why a Pod with the term runs off the pool: a kind, and the
// taint that bars it from the pool's Nodes.
type spill struct{ Kind, Taint string }

// The kinds of spill.
const (
	spillGone     = "gone"            // the Pod's Node no longer exists
	spillUnread   = "unread"          // the pool's Nodes could not be read
	spillMissing  = "missing"         // the pool has no Nodes
	spillClosed   = "not schedulable" // none is Ready and uncordoned
	spillTaint    = "taint"           // every schedulable one has a taint the Pod does not tolerate
	spillFull     = "full"            // none has room for its requests
	spillRoomLeft = "room"            // one has room now
)

// spillCause judges why a Pod with the term would not be placed on the
// pool now, in the scheduler's order: Nodes, then taints, then room.
func (pn *poolNodes) spillCause(p *corev1.Pod) spill {
	if pn.err != nil {
		return spill{Kind: spillUnread}
	}
	if len(pn.members) == 0 {
		return spill{Kind: spillMissing}
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
		taints, tols := n.Spec.Taints, p.Spec.Tolerations
		if t, found := schedulingcorev1.FindMatchingUntoleratedTaint(logr.Discard(), taints, tols, hard, false); found {
			taint = cmp.Or(taint, t.ToString())
			continue
		}
		open++
		if fits(request, n.Status.Allocatable, pn.requested[n.Name]) {
			return spill{Kind: spillRoomLeft}
		}
	}
	switch {
	case usable == 0:
		return spill{Kind: spillClosed}
	case open == 0:
		return spill{Kind: spillTaint, Taint: taint}
	}
	return spill{Kind: spillFull}
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

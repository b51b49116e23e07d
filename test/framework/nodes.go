package framework

import (
	"context"
	"errors"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"

	"github.com/kyma-project/kim-snatch/test/tools"
)

// PoolLabel is the label Gardener puts on every Node of a worker pool.
const PoolLabel = "worker.gardener.cloud/pool"

// Pools used throughout the tests.
const (
	KymaPool     = "cpu-worker-0"
	CustomerPool = "customer-pool"
)

// CreateNodes creates n Ready linux/amd64 Nodes in pool and zone-a, named
// <pool>-<sequence>, each a realistic worker: 4 CPUs, 16 GiB, 110 Pods.
// Nothing heartbeats them, and nothing needs to: kube-controller-manager
// runs without its node-lifecycle controller and kube-apiserver without the
// TaintNodesByCondition admission plugin, so nothing ever marks them
// NotReady or taints them. An existing cluster has real nodes, so
// CreateNodes refuses to run against one; label its nodes into the pools
// instead.
func (c *Cluster) CreateNodes(ctx context.Context, pool string, n int) ([]corev1.Node, error) {
	if c.external {
		return nil, errors.New("CreateNodes needs a cluster started by this package; label the existing cluster's nodes with " + PoolLabel + " instead")
	}
	nodes := make([]corev1.Node, 0, n)
	for range n {
		c.nodeSeq++
		created, err := c.createNode(ctx, newNode(fmt.Sprintf("%s-%d", pool, c.nodeSeq), pool))
		if err != nil {
			return nil, err
		}
		nodes = append(nodes, *created)
	}
	return nodes, nil
}

func newNode(name, pool string) *corev1.Node {
	capacity := corev1.ResourceList{
		corev1.ResourceCPU:    resource.MustParse("4"),
		corev1.ResourceMemory: resource.MustParse("16Gi"),
		corev1.ResourcePods:   resource.MustParse("110"),
	}
	now := metav1.Now()
	return &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{
			Name: name,
			Labels: map[string]string{
				PoolLabel:                pool,
				corev1.LabelHostname:     name,
				corev1.LabelOSStable:     "linux",
				corev1.LabelArchStable:   "amd64",
				corev1.LabelTopologyZone: "zone-a",
			},
		},
		Status: corev1.NodeStatus{
			Capacity:    capacity,
			Allocatable: capacity.DeepCopy(),
			Conditions: []corev1.NodeCondition{{
				Type:               corev1.NodeReady,
				Status:             corev1.ConditionTrue,
				Reason:             "KubeletReady",
				LastHeartbeatTime:  now,
				LastTransitionTime: now,
			}},
			NodeInfo: corev1.NodeSystemInfo{OperatingSystem: "linux", Architecture: "amd64", KubeletVersion: tools.KubernetesVersion},
		},
	}
}

// createNode creates node, then writes its status.
func (c *Cluster) createNode(ctx context.Context, node *corev1.Node) (*corev1.Node, error) {
	name, status := node.Name, node.Status
	created, err := c.Clientset.CoreV1().Nodes().Create(ctx, node, metav1.CreateOptions{})
	if err != nil {
		return nil, fmt.Errorf("create node %s: %w", name, err)
	}
	// The API server drops status on create; it is a subresource.
	// kube-controller-manager may write the new Node in between (its
	// TTL controller annotates it), so a conflict reads it again.
	err = retry.RetryOnConflict(retry.DefaultRetry, func() error {
		created.Status = status
		updated, err := c.Clientset.CoreV1().Nodes().UpdateStatus(ctx, created, metav1.UpdateOptions{})
		switch {
		case err == nil:
			created = updated
		case apierrors.IsConflict(err):
			if latest, getErr := c.Clientset.CoreV1().Nodes().Get(ctx, name, metav1.GetOptions{}); getErr == nil {
				created = latest
			}
		}
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("set status of node %s: %w", name, err)
	}
	return created, nil
}

// PoolTerms counts the Pod's preferred node affinity terms that are the
// webhook's term for pool: one expression, PoolLabel In [pool]. It is the
// tests' own reading of a Pod, independent of the webhook's code.
func PoolTerms(p *corev1.Pod, pool string) int {
	if p.Spec.Affinity == nil || p.Spec.Affinity.NodeAffinity == nil {
		return 0
	}
	n := 0
	for _, t := range p.Spec.Affinity.NodeAffinity.PreferredDuringSchedulingIgnoredDuringExecution {
		ex := t.Preference.MatchExpressions
		if len(ex) == 1 && ex[0].Key == PoolLabel && ex[0].Operator == corev1.NodeSelectorOpIn &&
			len(ex[0].Values) == 1 && ex[0].Values[0] == pool {
			n++
		}
	}
	return n
}

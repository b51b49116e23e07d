package check

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/pager"
	resourcehelper "k8s.io/component-helpers/resource"
)

// podPageSize is the number of Pods one list request asks for, kubectl's
// chunk size. placement reads every Pod of the cluster: read in one list,
// they are held in memory twice over, as the response and as objects, and
// the check Job's memory limit would bound the cluster it can judge
// (docs/benchmarks.md, "check at scale").
const podPageSize = 500

// eachPod calls fn for every Pod in namespace ("" for all) that opts
// select, a page at a time, with client-go's pager: one page is in fn's
// hands while the next is read, so memory does not grow with the cluster.
// fn must not keep the Pod. A list that outlasts the API server's
// compaction window (five minutes by default) fails with Expired, and the
// item reports it as a read failure; it does not fall back to one list.
func eachPod(ctx context.Context, client kubernetes.Interface, namespace string, opts metav1.ListOptions,
	fn func(*corev1.Pod)) error {
	p := pager.New(func(ctx context.Context, opts metav1.ListOptions) (runtime.Object, error) {
		return client.CoreV1().Pods(namespace).List(ctx, opts)
	})
	p.PageSize, p.PageBufferSize = podPageSize, 1
	return p.EachListItem(ctx, opts, func(obj runtime.Object) error {
		pod, ok := obj.(*corev1.Pod)
		if !ok {
			return fmt.Errorf("a Pod list held a %T", obj)
		}
		fn(pod)
		return nil
	})
}

// requestsOn sums the requests of the bound, unfinished Pods on each of
// nodes, as the scheduler counts them. Each Node's Pods are read by a field
// selector on spec.nodeName, which the API server's watch cache indexes, so
// the cost follows the pool's Pods, not the cluster's: one request per
// Node.
func requestsOn(ctx context.Context, client kubernetes.Interface, nodes []*corev1.Node) (
	map[string]corev1.ResourceList, error) {
	byNode := map[string]corev1.ResourceList{}
	for _, n := range nodes {
		sel := fields.AndSelectors(
			fields.OneTermEqualSelector("spec.nodeName", n.Name),
			fields.OneTermNotEqualSelector("status.phase", string(corev1.PodSucceeded)),
			fields.OneTermNotEqualSelector("status.phase", string(corev1.PodFailed)),
		)
		err := eachPod(ctx, client, "", metav1.ListOptions{FieldSelector: sel.String()}, func(p *corev1.Pod) {
			// The selector's conditions again: a client that ignores
			// field selectors must not count a Pod twice.
			if p.Spec.NodeName != n.Name || p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed {
				return
			}
			if byNode[n.Name] == nil {
				byNode[n.Name] = corev1.ResourceList{}
			}
			addResources(byNode[n.Name], resourcehelper.PodRequests(p, resourcehelper.PodResourcesOptions{}))
		})
		if err != nil {
			return nil, err
		}
	}
	return byNode, nil
}

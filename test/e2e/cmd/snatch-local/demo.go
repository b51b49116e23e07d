package main

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/kyma-project/kim-snatch/test/e2e/stack"
	"github.com/kyma-project/kim-snatch/test/framework"
	"github.com/kyma-project/kim-snatch/test/framework/poll"
)

// The demo workload: one Deployment of pause Pods per namespace.
const (
	kymaNamespace     = "kyma-demo"
	customerNamespace = "customer-demo"
	deploymentName    = "demo"
	cpuRequest        = "50m"
	// bindTimeout is generous: a loaded machine may be running tests too.
	bindTimeout = 2 * time.Minute
)

// demoNamespace is one namespace of the demo and its Deployment's size.
type demoNamespace struct {
	name     string
	managed  bool
	replicas int
}

func demoNamespaces(o Options) []demoNamespace {
	return []demoNamespace{
		{name: kymaNamespace, managed: true, replicas: o.KymaReplicas},
		{name: customerNamespace, managed: false, replicas: o.CustomerReplicas},
	}
}

// deployDemo creates the demo namespaces and Deployments, waits until the
// scheduler has bound every Pod, and returns the Pods' rows in the order
// of the namespaces.
func deployDemo(ctx context.Context, cs kubernetes.Interface, namespaces []demoNamespace, progress func(string, ...any)) ([]Row, error) {
	for _, ns := range namespaces {
		how := "not managed: the webhook is not called"
		if ns.managed {
			how = stack.ManagedByLabel + "=kyma"
		}
		progress("creating namespace %s (%s) with Deployment %s of %d pause Pods", ns.name, how, deploymentName, ns.replicas)
		if err := stack.CreateNamespace(ctx, cs, ns.name, ns.managed); err != nil {
			return nil, fmt.Errorf("create namespace %s: %w", ns.name, err)
		}
		if _, err := cs.AppsV1().Deployments(ns.name).Create(ctx, stack.PauseDeployment(deploymentName, int32(ns.replicas), cpuRequest), metav1.CreateOptions{}); err != nil {
			return nil, fmt.Errorf("create deployment %s/%s: %w", ns.name, deploymentName, err)
		}
	}
	progress("waiting for kube-scheduler to bind the Pods to Nodes (no kubelet runs them; they stay Pending)")
	var pods []corev1.Pod
	for _, ns := range namespaces {
		got, err := waitBound(ctx, cs, ns.name, deploymentName, ns.replicas)
		if err != nil {
			return nil, err
		}
		pods = append(pods, got...)
	}
	nodes, err := cs.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, fmt.Errorf("list nodes: %w", err)
	}
	pools := map[string]string{}
	for _, n := range nodes.Items {
		pools[n.Name] = n.Labels[framework.PoolLabel]
	}
	return rowsOf(pods, pools), nil
}

// waitBound waits until the Deployment has exactly replicas Pods and all
// of them are bound to a Node, and returns them.
func waitBound(ctx context.Context, cs kubernetes.Interface, ns, name string, replicas int) ([]corev1.Pod, error) {
	var pods []corev1.Pod
	what := fmt.Sprintf("the %d Pods of deployment %s/%s bound to a Node", replicas, ns, name)
	err := poll.Until(ctx, what, func(ctx context.Context) error {
		got, bound, err := stack.PausePods(ctx, cs, ns, name)
		if err != nil {
			// The next poll retries; a lasting error ends in the timeout,
			// which reports it.
			return err
		}
		pods = got
		if len(pods) != replicas || bound != replicas {
			return fmt.Errorf("%d Pods, %d bound", len(pods), bound)
		}
		return nil
	}, poll.Timeout(bindTimeout))
	if err != nil && ctx.Err() != nil {
		return nil, fmt.Errorf("wait for the Pods of deployment %s/%s: %w", ns, name, ctx.Err())
	}
	if err != nil {
		return nil, fmt.Errorf("%w (see kube-scheduler.log and kube-controller-manager.log)", err)
	}
	return pods, nil
}

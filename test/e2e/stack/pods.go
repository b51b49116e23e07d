package stack

import (
	"context"
	"errors"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"

	"github.com/kyma-project/kim-snatch/pkg/affinity"
	"github.com/kyma-project/kim-snatch/test/framework"
)

// podMirror stands in for the kubelet's status reports: for every replica
// whose process runs there is a Pod object in kyma-system, bound to a
// Kyma-pool Node, labelled like the Deployment's Pods, Running, and Ready
// exactly when the process's /readyz answers 200. A replica whose process
// has ended has no Pod, as a terminated Deployment Pod is gone. Tools that
// inspect the installation, such as `cabundle-syncer check`, then see what
// they would see in a cluster.
type podMirror struct {
	client kubernetes.Interface
	node   string
}

func newPodMirror(client kubernetes.Interface) *podMirror {
	return &podMirror{client: client}
}

// start mirrors the replicas that replicas returns, now and every 250 ms
// until ctx ends.
func (m *podMirror) start(ctx context.Context, replicas func() []*Replica) error {
	nodes, err := m.client.CoreV1().Nodes().List(ctx, metav1.ListOptions{LabelSelector: framework.PoolLabel + "=" + framework.KymaPool})
	if err != nil {
		return err
	}
	if len(nodes.Items) == 0 {
		return errors.New("stack: no Kyma-pool node to place the replicas' Pods on")
	}
	m.node = nodes.Items[0].Name
	for _, r := range replicas() {
		if err := m.sync(ctx, r); err != nil {
			return err
		}
	}
	go func() {
		for {
			select {
			case <-ctx.Done():
				return
			case <-time.After(250 * time.Millisecond):
			}
			for _, r := range replicas() {
				_ = m.sync(ctx, r)
			}
		}
	}()
	return nil
}

func (m *podMirror) sync(ctx context.Context, r *Replica) error {
	pods := m.client.CoreV1().Pods(Namespace)
	pod, err := pods.Get(ctx, r.Name, metav1.GetOptions{})
	if err != nil && !apierrors.IsNotFound(err) {
		return err
	}
	if !r.Running() {
		if err == nil {
			return m.remove(ctx, r)
		}
		return err
	}
	if apierrors.IsNotFound(err) {
		pod, err = pods.Create(ctx, m.pod(r), metav1.CreateOptions{})
		if err != nil {
			return err
		}
	}
	ready := corev1.ConditionFalse
	if r.Ready(ctx) {
		ready = corev1.ConditionTrue
	}
	if pod.Status.Phase == corev1.PodRunning && podCondition(pod, corev1.PodReady) == ready {
		return nil
	}
	now := metav1.Now()
	pod.Status.Phase = corev1.PodRunning
	// No podIP: the Service's selector matches these Pods, and
	// kube-controller-manager would write 127.0.0.1 into an IPv4
	// EndpointSlice, which rejects loopback. The stack writes the
	// endpoints itself (endpoints.go).
	pod.Status.HostIP = "127.0.0.1"
	if pod.Status.StartTime == nil {
		pod.Status.StartTime = &now
	}
	pod.Status.Conditions = []corev1.PodCondition{
		{Type: corev1.PodScheduled, Status: corev1.ConditionTrue, LastTransitionTime: now},
		{Type: corev1.PodInitialized, Status: corev1.ConditionTrue, LastTransitionTime: now},
		{Type: corev1.ContainersReady, Status: ready, LastTransitionTime: now},
		{Type: corev1.PodReady, Status: ready, LastTransitionTime: now},
	}
	// kubectl's READY column counts the containers.
	pod.Status.ContainerStatuses = []corev1.ContainerStatus{{
		Name: r.App, Image: r.App + ":local", Ready: ready == corev1.ConditionTrue, Started: ptr.To(true),
		State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: *pod.Status.StartTime}},
	}}
	_, err = pods.UpdateStatus(ctx, pod, metav1.UpdateOptions{})
	return err
}

// remove deletes the Pod of r at once; a missing Pod is not an error.
func (m *podMirror) remove(ctx context.Context, r *Replica) error {
	grace := int64(0)
	err := m.client.CoreV1().Pods(Namespace).Delete(ctx, r.Name, metav1.DeleteOptions{GracePeriodSeconds: &grace})
	if apierrors.IsNotFound(err) {
		return nil
	}
	return err
}

// pod is the Pod object of r: its container runs with r's arguments, which
// `cabundle-syncer check` reads the webhook's --worker-pool from, and it
// prefers the Kyma pool, as the Pod templates of deploy/ do.
func (m *podMirror) pod(r *Replica) *corev1.Pod {
	term := affinity.DefaultPolicy().Term()
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			Name: r.Name, Namespace: Namespace,
			Labels: map[string]string{"app.kubernetes.io/name": r.App, "app.kubernetes.io/part-of": "kim-snatch"},
		},
		Spec: corev1.PodSpec{
			NodeName:   m.node,
			Containers: []corev1.Container{{Name: r.App, Image: r.App + ":local", Args: r.Args()}},
			Affinity: &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{
				PreferredDuringSchedulingIgnoredDuringExecution: []corev1.PreferredSchedulingTerm{term},
			}},
		},
	}
}

func podCondition(pod *corev1.Pod, t corev1.PodConditionType) corev1.ConditionStatus {
	for _, c := range pod.Status.Conditions {
		if c.Type == t {
			return c.Status
		}
	}
	return corev1.ConditionUnknown
}

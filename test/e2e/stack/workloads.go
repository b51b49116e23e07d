package stack

import (
	"context"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"
)

// PauseImage is the image of the workloads created on the stack. No
// kubelet runs it; the scheduler only binds the Pods.
const PauseImage = "registry.k8s.io/pause:3.10"

// PauseDeployment is a Deployment of pause Pods, each requesting cpu, as a
// Kyma module operator or a customer workload would be. The Pods have no
// kubelet to stop them, so they are deleted at once.
func PauseDeployment(name string, replicas int32, cpu string) *appsv1.Deployment {
	labels := map[string]string{"app": name}
	return &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: appsv1.DeploymentSpec{
			Replicas: &replicas,
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: corev1.PodSpec{
					TerminationGracePeriodSeconds: ptr.To[int64](0),
					Containers: []corev1.Container{{
						Name:  "app",
						Image: PauseImage,
						Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{
							corev1.ResourceCPU: resource.MustParse(cpu),
						}},
					}},
				},
			},
		},
	}
}

// PausePods lists the Pods of the PauseDeployment name in ns and counts
// those bound to a Node.
func PausePods(ctx context.Context, cs kubernetes.Interface, ns, name string) (pods []corev1.Pod, bound int, err error) {
	list, err := cs.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: "app=" + name})
	if err != nil {
		return nil, 0, err
	}
	for _, p := range list.Items {
		if p.Spec.NodeName != "" {
			bound++
		}
	}
	return list.Items, bound, nil
}

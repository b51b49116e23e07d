package klm

import (
	"context"
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// stateCheck returns the state of the module as KLM judges it
// (internal/manifest/statecheck/state_check.go): by the first Deployment
// or StatefulSet of applied, in the manifest's order, alone; Ready when
// there is none. Any other Deployment or StatefulSet is not looked at.
func stateCheck(ctx context.Context, c client.Client, applied []*unstructured.Unstructured) (State, error) {
	for _, obj := range applied {
		if obj.GroupVersionKind().Group != appsv1.GroupName {
			continue
		}
		switch obj.GetKind() {
		case "Deployment":
			var d appsv1.Deployment
			if err := runtime.DefaultUnstructuredConverter.FromUnstructured(obj.Object, &d); err != nil {
				return StateError, fmt.Errorf("read Deployment %s/%s: %w", obj.GetNamespace(), obj.GetName(), err)
			}
			return deploymentState(&d), nil
		case "StatefulSet":
			var s appsv1.StatefulSet
			if err := runtime.DefaultUnstructuredConverter.FromUnstructured(obj.Object, &s); err != nil {
				return StateError, fmt.Errorf("read StatefulSet %s/%s: %w", obj.GetNamespace(), obj.GetName(), err)
			}
			return statefulSetState(ctx, c, &s)
		}
	}
	return StateReady, nil
}

// deploymentState judges a Deployment by its Progressing and Available
// conditions (statecheck/deployment_state_check.go): Ready once the new
// ReplicaSet is available, Processing while it rolls out, and Error
// otherwise, also before the Deployment controller has written any
// condition.
func deploymentState(d *appsv1.Deployment) State {
	var progressing, available *appsv1.DeploymentCondition
	for i, cond := range d.Status.Conditions {
		switch cond.Type {
		case appsv1.DeploymentProgressing:
			progressing = &d.Status.Conditions[i]
		case appsv1.DeploymentAvailable:
			available = &d.Status.Conditions[i]
		}
	}
	if progressing == nil || progressing.Status != corev1.ConditionTrue {
		return StateError
	}
	isAvailable := available != nil && available.Status == corev1.ConditionTrue
	switch progressing.Reason {
	case "NewReplicaSetAvailable":
		if isAvailable {
			return StateReady
		}
		return StateProcessing
	case "FoundNewReplicaSet", "NewReplicaSetCreated", "ReplicaSetUpdated":
		return StateProcessing
	}
	return StateError
}

// statefulSetState is Ready when as many replicas are ready as the spec
// asks for, and otherwise judged by the first container status of the
// first of its Pods (statecheck/statefulset_state_check.go).
func statefulSetState(ctx context.Context, c client.Client, s *appsv1.StatefulSet) (State, error) {
	if s.Spec.Replicas != nil && *s.Spec.Replicas == s.Status.ReadyReplicas {
		return StateReady, nil
	}
	var pods corev1.PodList
	var selector map[string]string
	if s.Spec.Selector != nil {
		selector = s.Spec.Selector.MatchLabels
	}
	if err := c.List(ctx, &pods, client.InNamespace(s.Namespace), client.MatchingLabels(selector)); err != nil {
		return StateError, fmt.Errorf("list the Pods of StatefulSet %s/%s: %w", s.Namespace, s.Name, err)
	}
	for _, pod := range pods.Items {
		for _, cs := range pod.Status.ContainerStatuses {
			switch {
			case cs.Started == nil || !*cs.Started:
				return StateError, nil
			case cs.Ready:
				return StateReady, nil
			default:
				return StateProcessing, nil
			}
		}
	}
	return StateError, nil
}

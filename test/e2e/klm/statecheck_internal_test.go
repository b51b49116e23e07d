package klm

import (
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
)

func cond(typ appsv1.DeploymentConditionType, status corev1.ConditionStatus, reason string) appsv1.DeploymentCondition {
	return appsv1.DeploymentCondition{Type: typ, Status: status, Reason: reason}
}

func TestDeploymentState(t *testing.T) {
	const (
		progressing = appsv1.DeploymentProgressing
		available   = appsv1.DeploymentAvailable
		yes, no     = corev1.ConditionTrue, corev1.ConditionFalse
	)
	for _, tc := range []struct {
		name  string
		conds []appsv1.DeploymentCondition
		want  State
	}{
		{"no_conditions_is_error", nil, StateError},
		{"new_replica_set_available_is_ready", []appsv1.DeploymentCondition{
			cond(progressing, yes, "NewReplicaSetAvailable"), cond(available, yes, "MinimumReplicasAvailable")}, StateReady},
		{"rolling_out_is_processing", []appsv1.DeploymentCondition{
			cond(progressing, yes, "ReplicaSetUpdated"), cond(available, yes, "MinimumReplicasAvailable")}, StateProcessing},
		{"unavailable_is_processing", []appsv1.DeploymentCondition{
			cond(progressing, yes, "NewReplicaSetAvailable"), cond(available, no, "MinimumReplicasUnavailable"),
		}, StateProcessing},
		{"deadline_exceeded_is_error", []appsv1.DeploymentCondition{
			cond(progressing, no, "ProgressDeadlineExceeded"), cond(available, yes, "MinimumReplicasAvailable")}, StateError},
		{"available_without_progressing_is_error", []appsv1.DeploymentCondition{
			cond(available, yes, "MinimumReplicasAvailable")}, StateError},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := &appsv1.Deployment{Status: appsv1.DeploymentStatus{Conditions: tc.conds}}
			if got := deploymentState(d); got != tc.want {
				t.Errorf("state = %s, want %s", got, tc.want)
			}
		})
	}
}

func toUnstructured(t *testing.T, kind string, o runtime.Object) *unstructured.Unstructured {
	t.Helper()
	m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(o)
	if err != nil {
		t.Fatal(err)
	}
	u := &unstructured.Unstructured{Object: m}
	u.SetAPIVersion("apps/v1")
	u.SetKind(kind)
	return u
}

// Only the first Deployment or StatefulSet counts; neither the client nor
// any other object is looked at when the first is decided.
func TestStateCheckReadsTheFirstManagerOnly(t *testing.T) {
	ready := &appsv1.Deployment{Status: appsv1.DeploymentStatus{Conditions: []appsv1.DeploymentCondition{
		cond(appsv1.DeploymentProgressing, corev1.ConditionTrue, "NewReplicaSetAvailable"),
		cond(appsv1.DeploymentAvailable, corev1.ConditionTrue, "MinimumReplicasAvailable"),
	}}}
	unready := &appsv1.Deployment{}
	one := int32(1)
	readySet := &appsv1.StatefulSet{Spec: appsv1.StatefulSetSpec{Replicas: &one},
		Status: appsv1.StatefulSetStatus{ReadyReplicas: 1}}
	cm := obj("v1", "ConfigMap", "ns", "a")
	for _, tc := range []struct {
		name string
		objs []*unstructured.Unstructured
		want State
	}{
		{"no_manager_is_ready", []*unstructured.Unstructured{cm}, StateReady},
		{"ready_first_unready_second_is_ready", []*unstructured.Unstructured{cm, toUnstructured(t, "Deployment", ready),
			toUnstructured(t, "Deployment", unready)}, StateReady},
		{"unready_first_ready_second_is_error", []*unstructured.Unstructured{toUnstructured(t, "Deployment", unready),
			toUnstructured(t, "Deployment", ready)}, StateError},
		{"ready_statefulset_first_is_ready", []*unstructured.Unstructured{toUnstructured(t, "StatefulSet", readySet),
			toUnstructured(t, "Deployment", unready)}, StateReady},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := stateCheck(t.Context(), nil, tc.objs)
			if err != nil || got != tc.want {
				t.Errorf("state = %s, %v; want %s", got, err, tc.want)
			}
		})
	}
}

func TestIntervalsFollowTheState(t *testing.T) {
	iv := DefaultIntervals()
	for state, want := range map[State]time.Duration{
		StateReady: 5 * time.Minute, StateProcessing: 5 * time.Second, StateDeleting: 5 * time.Second,
		StateWarning: 30 * time.Second, StateError: 2 * time.Second,
	} {
		if got := iv.after(state); got != want {
			t.Errorf("requeue after %s = %v, want %v", state, got, want)
		}
	}
}

package kubelet

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
)

// statusState is what the worker last wrote, and when each of its
// conditions last changed.
type statusState struct {
	written *corev1.PodStatus
	conds   map[corev1.PodConditionType]condition
	retryAt time.Time
}

type condition struct {
	status corev1.ConditionStatus
	at     metav1.Time
}

// ourConditions are the Pod conditions the kubelet owns, in its order.
var ourConditions = []corev1.PodConditionType{
	corev1.PodReadyToStartContainers, corev1.PodInitialized, corev1.PodReady, corev1.ContainersReady,
}

// podStatus is the status the kubelet would report now. There is no Pod
// IP: kube-controller-manager's endpointslice controller then leaves the
// Pod out, and the stand-in's own endpoints are the only ones.
func (w *podWorker) podStatus(pod *corev1.Pod) corev1.PodStatus {
	st := corev1.PodStatus{StartTime: ptr.To(w.startTime)}
	for _, ip := range w.hostIPs {
		st.HostIPs = append(st.HostIPs, corev1.HostIP{IP: ip})
	}
	if len(w.hostIPs) > 0 {
		st.HostIP = w.hostIPs[0]
	}
	var running, waiting, stopped, succeeded int
	var unready []string
	for _, c := range w.containers {
		cs := corev1.ContainerStatus{
			Name: c.spec.Name, Image: c.spec.Image,
			RestartCount: int32(max(c.starts-1, 0)), //nolint:gosec // a small count
			Started:      ptr.To(c.run != nil),
		}
		switch {
		case c.run != nil:
			running++
			cs.State.Running = &corev1.ContainerStateRunning{StartedAt: c.run.startedAt}
			cs.Ready, cs.ContainerID = c.run.ready, c.run.containerID
		case c.terminated != nil:
			stopped++
			if c.terminated.ExitCode == 0 {
				succeeded++
			}
			cs.State.Terminated, cs.ContainerID = c.terminated, c.terminated.ContainerID
		default:
			// A container that ran before and waits for its restart counts
			// as stopped, one that never ran as waiting.
			if c.last != nil {
				stopped++
				if c.last.ExitCode == 0 {
					succeeded++
				}
			} else {
				waiting++
			}
			cs.State.Waiting = &corev1.ContainerStateWaiting{Reason: cmp.Or(c.waiting.reason, "ContainerCreating"), Message: c.waiting.message}
		}
		if c.last != nil {
			cs.LastTerminationState.Terminated = c.last
		}
		if !cs.Ready {
			unready = append(unready, c.spec.Name)
		}
		st.ContainerStatuses = append(st.ContainerStatuses, cs)
	}
	podTerminal := !slices.ContainsFunc(w.containers, func(c *containerState) bool { return !c.final })
	st.Phase = phase(pod, podTerminal, running, waiting, stopped, succeeded)

	containersReady := condition{status: corev1.ConditionTrue}
	ready := condition{status: corev1.ConditionTrue}
	var readyReason, readyMessage string
	switch {
	case podTerminal:
		containersReady.status, ready.status, readyReason = corev1.ConditionFalse, corev1.ConditionFalse, "PodCompleted"
	case len(unready) > 0:
		containersReady.status, ready.status, readyReason = corev1.ConditionFalse, corev1.ConditionFalse, "ContainersNotReady"
		readyMessage = fmt.Sprintf("containers with unready status: [%s]", strings.Join(unready, " "))
	default:
		if gates := unmetGates(pod); len(gates) > 0 {
			ready.status, readyReason = corev1.ConditionFalse, "ReadinessGatesNotReady"
			readyMessage = fmt.Sprintf("corresponding condition of pod readiness gate %q does not exist.", gates[0])
		}
	}
	readyToStart := condition{status: corev1.ConditionFalse}
	if w.prepared && !podTerminal {
		readyToStart.status = corev1.ConditionTrue
	}
	want := map[corev1.PodConditionType]corev1.PodCondition{
		corev1.PodReadyToStartContainers: {Status: readyToStart.status},
		corev1.PodInitialized:            {Status: corev1.ConditionTrue},
		corev1.ContainersReady:           {Status: containersReady.status, Reason: readyReason, Message: readyMessage},
		corev1.PodReady:                  {Status: ready.status, Reason: readyReason, Message: readyMessage},
	}
	if w.status.conds == nil {
		w.status.conds = map[corev1.PodConditionType]condition{}
	}
	for _, t := range ourConditions {
		c := want[t]
		c.Type = t
		prev, ok := w.status.conds[t]
		if !ok || prev.status != c.Status {
			prev = condition{status: c.Status, at: metav1.Now()}
			w.status.conds[t] = prev
		}
		c.LastTransitionTime = prev.at
		st.Conditions = append(st.Conditions, c)
	}
	for _, c := range pod.Status.Conditions {
		if !slices.Contains(ourConditions, c.Type) {
			st.Conditions = append(st.Conditions, c)
		}
	}
	return st
}

// phase is the kubelet's Pod phase for the container counts.
func phase(pod *corev1.Pod, podTerminal bool, running, waiting, stopped, succeeded int) corev1.PodPhase {
	var p corev1.PodPhase
	switch {
	case waiting > 0:
		p = corev1.PodPending
	case running > 0:
		p = corev1.PodRunning
	case stopped > 0 && podTerminal:
		p = corev1.PodFailed
		if stopped == succeeded {
			p = corev1.PodSucceeded
		}
	case stopped > 0:
		switch pod.Spec.RestartPolicy {
		case corev1.RestartPolicyNever:
			p = corev1.PodFailed
			if stopped == succeeded {
				p = corev1.PodSucceeded
			}
		case corev1.RestartPolicyOnFailure:
			p = corev1.PodRunning
			if stopped == succeeded {
				p = corev1.PodSucceeded
			}
		default:
			p = corev1.PodRunning
		}
	default:
		p = corev1.PodPending
	}
	if podTerminal && p != corev1.PodSucceeded {
		p = corev1.PodFailed
	}
	return p
}

// unmetGates are the Pod's readiness gates whose condition is not True.
func unmetGates(pod *corev1.Pod) []corev1.PodConditionType {
	var out []corev1.PodConditionType
	for _, g := range pod.Spec.ReadinessGates {
		i := slices.IndexFunc(pod.Status.Conditions, func(c corev1.PodCondition) bool { return c.Type == g.ConditionType })
		if i < 0 || pod.Status.Conditions[i].Status != corev1.ConditionTrue {
			out = append(out, g.ConditionType)
		}
	}
	return out
}

// writeStatus writes the Pod's status if it changed since the last
// write, as the kubelet's status manager does: a merge patch of the
// status subresource that carries the Pod's UID, so that it cannot land
// on a new Pod of the same name.
func (w *podWorker) writeStatus(ctx context.Context, pod *corev1.Pod) {
	if ctx.Err() != nil || time.Now().Before(w.status.retryAt) {
		return
	}
	st := w.podStatus(pod)
	if w.status.written != nil && apiequality.Semantic.DeepEqual(*w.status.written, st) {
		return
	}
	body, err := json.Marshal(map[string]any{"metadata": map[string]any{"uid": w.uid}, "status": st})
	if err != nil {
		w.logf("status: %v", err)
		return
	}
	_, err = w.k.client.CoreV1().Pods(w.namespace).Patch(ctx, w.name, types.MergePatchType, body, metav1.PatchOptions{}, "status")
	switch {
	case err == nil:
		w.status.written, w.status.retryAt = &st, time.Time{}
	case apierrors.IsNotFound(err) || apierrors.IsConflict(err):
		w.status.written = &st // the Pod is gone or replaced
	case ctx.Err() == nil:
		w.logf("status: %v", err)
		w.status.retryAt = time.Now().Add(retryInterval)
	}
}

// Package kubestatemetrics stands in for kube-state-metrics, which cannot
// be fetched here (the module proxy refuses k8s.io/kube-state-metrics/v2).
// Its command serves /metrics as kube-state-metrics does, from a Pod
// behind a Service and a ServiceMonitor (test/e2e/neighbours/monitoring):
// the same metric names, labels and label allowlist as the real one for
// the series deploy/'s rules and dashboards read, computed from the API
// objects at each scrape.
package kubestatemetrics

import (
	"bytes"
	"context"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"sort"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"
)

// Write writes, from the API objects, the series of kube-state-metrics'
// documented metrics that deploy/'s rules read, with the labels that o
// allows and the metrics it opts in:
//
//   - kube_node_labels{node, label_worker_gardener_cloud_pool}
//   - kube_namespace_labels{namespace, label_operator_kyma_project_io_managed_by}
//   - kube_pod_info{namespace, pod, uid, node, created_by_kind, created_by_name}
//     ("<none>" for a Pod without a controller)
//   - kube_pod_status_phase{namespace, pod, uid, phase}, 1 for the Pod's
//     phase and 0 for the others
//   - kube_pod_labels{namespace, pod, uid, label_kim_snatch_kyma_project_io_opt_out}
//   - kube_pod_nodeselectors{namespace, pod, uid, nodeselector_<key>...}, one
//     label per key of the Pod's nodeSelector, where o opts it in
//     (no allowlist)
//   - kube_pod_created{namespace, pod, uid}, the creation time in seconds
//   - kube_pod_container_info{namespace, pod, uid, container, image_spec,
//     image, image_id, container_id}, one per container status
//   - kube_deployment_spec_replicas, kube_deployment_status_replicas,
//     kube_deployment_status_replicas_available and
//     kube_deployment_status_replicas_unavailable, each {namespace, deployment}
//   - kube_deployment_status_condition{namespace, deployment, condition,
//     status}, for each condition of the Deployment's status: 1 for its
//     status ("true", "false" or "unknown") and 0 for the two others
//   - kube_poddisruptionbudget_created{namespace, poddisruptionbudget}, the
//     creation time in seconds
//   - kube_job_created{namespace, job_name}, the creation time in seconds
//   - kube_job_failed{namespace, job_name, condition}, for the Job's Failed
//     condition: 1 for its status ("true", "false" or "unknown") and 0 for
//     the two others
//   - kube_node_status_allocatable{node, resource, unit} and
//     kube_pod_container_resource_requests{namespace, pod, uid, container,
//     node, resource, unit}, for cpu (core) and memory (byte)
//
// An allowlisted label a object lacks is left out, as kube-state-metrics
// does.
func Write(ctx context.Context, cs kubernetes.Interface, o Options) ([]byte, error) {
	var b bytes.Buffer
	nodes, err := cs.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, err
	}
	writeLabels(&b, o, "node", "nodes", nodes.Items)
	namespaces, err := cs.CoreV1().Namespaces().List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, err
	}
	writeLabels(&b, o, "namespace", "namespaces", namespaces.Items)
	pods, err := cs.CoreV1().Pods("").List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, err
	}
	writePods(&b, o, pods.Items)
	writeContainers(&b, pods.Items)
	deployments, err := cs.AppsV1().Deployments("").List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, err
	}
	writeDeployments(&b, deployments.Items)
	budgets, err := cs.PolicyV1().PodDisruptionBudgets("").List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, err
	}
	fmt.Fprintln(&b, "# TYPE kube_poddisruptionbudget_created gauge")
	for _, pdb := range budgets.Items {
		series(&b, "kube_poddisruptionbudget_created", int(pdb.CreationTimestamp.Unix()), []string{"namespace", pdb.Namespace, "poddisruptionbudget", pdb.Name})
	}
	jobs, err := cs.BatchV1().Jobs("").List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, err
	}
	writeJobs(&b, jobs.Items)
	writeResources(&b, nodes.Items, pods.Items)
	return b.Bytes(), nil
}

// writeLabels writes kube_<kind>_labels for each object of a cluster-scoped
// kind: the labels the allowlist of its resource keeps, and its name under
// the label kind.
func writeLabels[T any, P interface {
	*T
	metav1.Object
}](b *bytes.Buffer, o Options, kind, resource string, items []T) {
	name := "kube_" + kind + "_labels"
	fmt.Fprintf(b, "# TYPE %s gauge\n", name)
	for i := range items {
		obj := P(&items[i])
		series(b, name, 1, append(allowlisted(obj.GetLabels(), o, resource), kind, obj.GetName()))
	}
}

// writePods writes the Pod-level series, in the order of Write's list.
func writePods(b *bytes.Buffer, o Options, pods []corev1.Pod) {
	fmt.Fprintln(b, "# TYPE kube_pod_info gauge")
	for _, p := range pods {
		kind, name := "<none>", "<none>"
		if ref := metav1.GetControllerOf(&p); ref != nil {
			kind, name = ref.Kind, ref.Name
		}
		series(b, "kube_pod_info", 1, append(podKeys(p), "node", p.Spec.NodeName, "created_by_kind", kind, "created_by_name", name))
	}
	fmt.Fprintln(b, "# TYPE kube_pod_status_phase gauge")
	for _, p := range pods {
		for _, phase := range []corev1.PodPhase{corev1.PodPending, corev1.PodSucceeded, corev1.PodFailed, corev1.PodUnknown, corev1.PodRunning} {
			v := 0
			if p.Status.Phase == phase {
				v = 1
			}
			series(b, "kube_pod_status_phase", v, append(podKeys(p), "phase", string(phase)))
		}
	}
	fmt.Fprintln(b, "# TYPE kube_pod_labels gauge")
	for _, p := range pods {
		series(b, "kube_pod_labels", 1, append(podKeys(p), allowlisted(p.Labels, o, "pods")...))
	}
	if slices.Contains(o.OptIn, "kube_pod_nodeselectors") {
		fmt.Fprintln(b, "# TYPE kube_pod_nodeselectors gauge")
		for _, p := range pods {
			series(b, "kube_pod_nodeselectors", 1, append(podKeys(p), prefixed("nodeselector_", p.Spec.NodeSelector)...))
		}
	}
	fmt.Fprintln(b, "# TYPE kube_pod_created gauge")
	for _, p := range pods {
		series(b, "kube_pod_created", int(p.CreationTimestamp.Unix()), podKeys(p))
	}
}

// deploymentMetrics are the Deployment gauges, in the order written.
var deploymentMetrics = []struct {
	name  string
	value func(*appsv1.Deployment) int32
}{
	{"kube_deployment_spec_replicas", func(d *appsv1.Deployment) int32 { return ptr.Deref(d.Spec.Replicas, 1) }},
	{"kube_deployment_status_replicas", func(d *appsv1.Deployment) int32 { return d.Status.Replicas }},
	{"kube_deployment_status_replicas_available", func(d *appsv1.Deployment) int32 { return d.Status.AvailableReplicas }},
	{"kube_deployment_status_replicas_unavailable", func(d *appsv1.Deployment) int32 { return d.Status.UnavailableReplicas }},
}

// writeDeployments writes each of deploymentMetrics for every Deployment.
func writeDeployments(b *bytes.Buffer, deployments []appsv1.Deployment) {
	for _, m := range deploymentMetrics {
		fmt.Fprintf(b, "# TYPE %s gauge\n", m.name)
		for _, d := range deployments {
			series(b, m.name, int(m.value(&d)), []string{"namespace", d.Namespace, "deployment", d.Name})
		}
	}
	fmt.Fprintln(b, "# TYPE kube_deployment_status_condition gauge")
	for _, d := range deployments {
		for _, c := range d.Status.Conditions {
			writeCondition(b, "kube_deployment_status_condition", c.Status,
				[]string{"namespace", d.Namespace, "deployment", d.Name, "condition", string(c.Type)}, "status")
		}
	}
}

// writeJobs writes each Job's creation time and its Failed condition.
func writeJobs(b *bytes.Buffer, jobs []batchv1.Job) {
	fmt.Fprintln(b, "# TYPE kube_job_created gauge")
	for _, j := range jobs {
		series(b, "kube_job_created", int(j.CreationTimestamp.Unix()), []string{"namespace", j.Namespace, "job_name", j.Name})
	}
	fmt.Fprintln(b, "# TYPE kube_job_failed gauge")
	for _, j := range jobs {
		for _, c := range j.Status.Conditions {
			if c.Type == batchv1.JobFailed {
				writeCondition(b, "kube_job_failed", c.Status, []string{"namespace", j.Namespace, "job_name", j.Name}, "condition")
			}
		}
	}
}

// writeCondition writes the series of one condition of an object, keys,
// as kube-state-metrics does: under the label key, 1 for the condition's
// status ("true", "false" or "unknown") and 0 for the two others.
func writeCondition(b *bytes.Buffer, name string, status corev1.ConditionStatus, keys []string, key string) {
	for _, s := range []corev1.ConditionStatus{corev1.ConditionTrue, corev1.ConditionFalse, corev1.ConditionUnknown} {
		v := 0
		if status == s {
			v = 1
		}
		series(b, name, v, append(slices.Clone(keys), key, strings.ToLower(string(s))))
	}
}

// writeContainers writes kube_pod_container_info for each container status
// of each Pod, as kube-state-metrics does: image_spec is the image the spec
// asks for, image and image_id what the kubelet reports it runs.
func writeContainers(b *bytes.Buffer, pods []corev1.Pod) {
	fmt.Fprintln(b, "# TYPE kube_pod_container_info gauge")
	for _, p := range pods {
		spec := make(map[string]string, len(p.Spec.Containers))
		for _, c := range p.Spec.Containers {
			spec[c.Name] = c.Image
		}
		for _, cs := range p.Status.ContainerStatuses {
			series(b, "kube_pod_container_info", 1, append(podKeys(p),
				"container", cs.Name, "image_spec", spec[cs.Name], "image", cs.Image, "image_id", cs.ImageID, "container_id", cs.ContainerID))
		}
	}
}

// units are kube-state-metrics' units of the resources it reports.
var units = map[corev1.ResourceName]string{corev1.ResourceCPU: "core", corev1.ResourceMemory: "byte"}

// writeResources writes the Nodes' allocatable CPU and memory and the
// requests of the bound Pods' containers.
func writeResources(b *bytes.Buffer, nodes []corev1.Node, pods []corev1.Pod) {
	fmt.Fprintln(b, "# TYPE kube_node_status_allocatable gauge")
	for _, n := range nodes {
		for res, unit := range units {
			if q, ok := n.Status.Allocatable[res]; ok {
				fmt.Fprintf(b, "kube_node_status_allocatable{node=%q,resource=%q,unit=%q} %g\n", n.Name, res, unit, q.AsApproximateFloat64())
			}
		}
	}
	fmt.Fprintln(b, "# TYPE kube_pod_container_resource_requests gauge")
	for _, p := range pods {
		if p.Spec.NodeName == "" {
			continue
		}
		for _, c := range p.Spec.Containers {
			for res, unit := range units {
				if q, ok := c.Resources.Requests[res]; ok {
					fmt.Fprintf(b, "kube_pod_container_resource_requests{namespace=%q,pod=%q,uid=%q,container=%q,node=%q,resource=%q,unit=%q} %g\n",
						p.Namespace, p.Name, p.UID, c.Name, p.Spec.NodeName, res, unit, q.AsApproximateFloat64())
				}
			}
		}
	}
}

// invalidLabelChars are what kube-state-metrics replaces with "_" when it
// turns a Kubernetes label key into a Prometheus label name.
var invalidLabelChars = regexp.MustCompile(`[^a-zA-Z0-9_]`)

// allowlisted returns the labels of an object of resource that o allows
// as label_<sanitized key> pairs, in the order of the allowlist, or of
// the keys where it allows every label.
func allowlisted(objLabels map[string]string, o Options, resource string) []string {
	keys, all := o.allowed(resource)
	if all {
		keys = slices.Sorted(maps.Keys(objLabels))
	}
	var out []string
	seen := map[string]bool{}
	for _, k := range keys {
		if v, ok := objLabels[k]; ok && !seen[k] {
			seen[k] = true
			out = append(out, "label_"+invalidLabelChars.ReplaceAllString(k, "_"), v)
		}
	}
	return out
}

// prefixed returns every key of m as prefix<sanitized key>, value pairs,
// as kube-state-metrics turns a map of the object into labels.
func prefixed(prefix string, m map[string]string) []string {
	out := make([]string, 0, 2*len(m))
	for k, v := range m {
		out = append(out, prefix+invalidLabelChars.ReplaceAllString(k, "_"), v)
	}
	return out
}

// podKeys are the labels that identify a Pod, as name, value pairs.
func podKeys(p corev1.Pod) []string {
	return []string{"namespace", p.Namespace, "pod", p.Name, "uid", string(p.UID)}
}

// series writes one sample in the text exposition format, with the labels
// kv, name, value pairs, sorted by name.
func series(b *bytes.Buffer, name string, v int, kv []string) {
	pairs := make([]string, 0, len(kv)/2)
	for i := 0; i+1 < len(kv); i += 2 {
		pairs = append(pairs, fmt.Sprintf("%s=%q", kv[i], kv[i+1]))
	}
	sort.Strings(pairs)
	fmt.Fprintf(b, "%s{%s} %d\n", name, strings.Join(pairs, ","), v)
}

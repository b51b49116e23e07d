package kubestatemetrics

import (
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/utils/ptr"
)

// Write exposes, in the order of its documentation, each metric's type
// line and the series of the objects, with only the allowlisted labels.
func TestWriteExposesTheAllowlistedSeriesOfEachObjectInOrder(t *testing.T) {
	b, err := Write(t.Context(), fake.NewClientset(objects()...), shipped(t))
	if err != nil {
		t.Fatal(err)
	}
	wantInOrder := []string{
		"# TYPE kube_node_labels gauge",
		`kube_node_labels{label_worker_gardener_cloud_pool="cpu-worker-0",node="n1"} 1`,
		"# TYPE kube_namespace_labels gauge",
		`kube_namespace_labels{label_operator_kyma_project_io_managed_by="kyma",namespace="kyma"} 1`,
		"# TYPE kube_pod_info gauge",
		`kube_pod_info{created_by_kind="ReplicaSet",created_by_name="rs",namespace="kyma",node="n1",pod="p",uid="u1"} 1`,
		"# TYPE kube_pod_status_phase gauge",
		`kube_pod_status_phase{namespace="kyma",phase="Pending",pod="p",uid="u1"} 0`,
		`kube_pod_status_phase{namespace="kyma",phase="Running",pod="p",uid="u1"} 1`,
		"# TYPE kube_pod_labels gauge",
		`kube_pod_labels{namespace="kyma",pod="p",uid="u1"} 1`,
		"# TYPE kube_pod_nodeselectors gauge",
		`kube_pod_nodeselectors{namespace="kyma",nodeselector_disk_io_type="ssd",pod="p",uid="u1"} 1`,
		"# TYPE kube_pod_created gauge",
		"# TYPE kube_pod_container_info gauge",
		`kube_pod_container_info{container="c",container_id="cid",image="img:1",image_id="sha",image_spec="img:1",namespace="kyma",pod="p",uid="u1"} 1`,
		"# TYPE kube_deployment_spec_replicas gauge",
		`kube_deployment_spec_replicas{deployment="d",namespace="kyma"} 1`,
		"# TYPE kube_deployment_status_replicas gauge",
		`kube_deployment_status_replicas{deployment="d",namespace="kyma"} 2`,
		"# TYPE kube_deployment_status_replicas_available gauge",
		`kube_deployment_status_replicas_available{deployment="d",namespace="kyma"} 0`,
		"# TYPE kube_deployment_status_replicas_unavailable gauge",
		`kube_deployment_status_replicas_unavailable{deployment="d",namespace="kyma"} 1`,
		"# TYPE kube_deployment_status_condition gauge",
		`kube_deployment_status_condition{condition="Progressing",deployment="d",namespace="kyma",status="true"} 0`,
		`kube_deployment_status_condition{condition="Progressing",deployment="d",namespace="kyma",status="false"} 1`,
		`kube_deployment_status_condition{condition="Progressing",deployment="d",namespace="kyma",status="unknown"} 0`,
		"# TYPE kube_poddisruptionbudget_created gauge",
		`kube_poddisruptionbudget_created{namespace="kyma",poddisruptionbudget="b"} 1700000000`,
		"# TYPE kube_job_created gauge",
		`kube_job_created{job_name="j",namespace="kyma"} 1700000001`,
		"# TYPE kube_job_failed gauge",
		`kube_job_failed{condition="true",job_name="j",namespace="kyma"} 1`,
		`kube_job_failed{condition="false",job_name="j",namespace="kyma"} 0`,
		`kube_job_failed{condition="unknown",job_name="j",namespace="kyma"} 0`,
		"# TYPE kube_node_status_allocatable gauge",
		`kube_node_status_allocatable{node="n1",resource="cpu",unit="core"} 2`,
		"# TYPE kube_pod_container_resource_requests gauge",
		`kube_pod_container_resource_requests{namespace="kyma",pod="p",uid="u1",container="c",node="n1",resource="memory",unit="byte"} 1024`,
	}
	out := string(b)
	checkInOrder(t, out, wantInOrder)
	if strings.Contains(out, "label_other") {
		t.Errorf("output has a label outside the allowlist:\n%s", out)
	}
}

// shipped are the Options of the flags that deploy/'s rules need
// kube-state-metrics to run with.
func shipped(t *testing.T) Options {
	t.Helper()
	o, err := ParseFlags([]string{"--metric-labels-allowlist=" + LabelsAllowlist, "--metric-opt-in-list=" + OptInMetrics})
	if err != nil {
		t.Fatal(err)
	}
	return o
}

// Without flags, as kube-state-metrics without them, no object's labels
// are exported and no opt-in metric; with a label "*" every label of the
// resource is, and an entry of the resource "*" counts for every one.
func TestWriteExportsOnlyWhatTheFlagsAllow(t *testing.T) {
	tests := []struct {
		name      string
		args      []string
		want, not []string
	}{
		{name: "no_flags", want: []string{`kube_node_labels{node="n1"} 1`, `kube_pod_labels{namespace="kyma",pod="p",uid="u1"} 1`},
			not: []string{"label_worker_gardener_cloud_pool", "kube_pod_nodeselectors"}},
		{name: "every_label_of_nodes", args: []string{"--metric-labels-allowlist=nodes=[*]"},
			want: []string{`kube_node_labels{label_other="x",label_worker_gardener_cloud_pool="cpu-worker-0",node="n1"} 1`},
			not:  []string{"label_operator_kyma_project_io_managed_by"}},
		{name: "a_label_of_every_resource", args: []string{"--metric-labels-allowlist=*=[operator.kyma-project.io/managed-by]"},
			want: []string{`kube_namespace_labels{label_operator_kyma_project_io_managed_by="kyma",namespace="kyma"} 1`},
			not:  []string{"label_worker_gardener_cloud_pool"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o, err := ParseFlags(tt.args)
			if err != nil {
				t.Fatal(err)
			}
			b, err := Write(t.Context(), fake.NewClientset(objects()...), o)
			if err != nil {
				t.Fatal(err)
			}
			for _, w := range tt.want {
				if !strings.Contains(string(b), w+"\n") {
					t.Errorf("output lacks %q:\n%s", w, b)
				}
			}
			for _, n := range tt.not {
				if strings.Contains(string(b), n) {
					t.Errorf("output has %q:\n%s", n, b)
				}
			}
		})
	}
}

// An argument kube-state-metrics would refuse, the stand-in refuses too.
func TestParseFlagsRefusesWhatItDoesNotKnow(t *testing.T) {
	for _, args := range [][]string{{"--resources=pods"}, {"--metric-labels-allowlist=nodes"}, {"extra"}} {
		if _, err := ParseFlags(args); err == nil {
			t.Errorf("ParseFlags(%q) = nil error", args)
		}
	}
}

// objects are a Node, a Namespace, a Pod of a ReplicaSet on the Node, a
// Deployment, a PodDisruptionBudget and a failed Job, each with a label or
// field of each series.
func objects() []runtime.Object {
	node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n1", Labels: map[string]string{"worker.gardener.cloud/pool": "cpu-worker-0", "other": "x"}},
		Status: corev1.NodeStatus{Allocatable: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("2")}}}
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "kyma", Labels: map[string]string{"operator.kyma-project.io/managed-by": "kyma"}}}
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "kyma", UID: "u1",
			OwnerReferences: []metav1.OwnerReference{{Kind: "ReplicaSet", Name: "rs", Controller: ptr.To(true)}}},
		Spec: corev1.PodSpec{NodeName: "n1", NodeSelector: map[string]string{"disk.io/type": "ssd"},
			Containers: []corev1.Container{{Name: "c", Image: "img:1", Resources: corev1.ResourceRequirements{
				Requests: corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("1Ki")}}}}},
		Status: corev1.PodStatus{Phase: corev1.PodRunning,
			ContainerStatuses: []corev1.ContainerStatus{{Name: "c", Image: "img:1", ImageID: "sha", ContainerID: "cid"}}},
	}
	dep := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: "d", Namespace: "kyma"}, Status: appsv1.DeploymentStatus{Replicas: 2, UnavailableReplicas: 1,
		Conditions: []appsv1.DeploymentCondition{{Type: appsv1.DeploymentProgressing, Status: corev1.ConditionFalse, Reason: "ProgressDeadlineExceeded"}}}}
	pdb := &policyv1.PodDisruptionBudget{ObjectMeta: metav1.ObjectMeta{Name: "b", Namespace: "kyma", CreationTimestamp: metav1.Unix(1700000000, 0)}}
	job := &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Name: "j", Namespace: "kyma", CreationTimestamp: metav1.Unix(1700000001, 0)},
		Status: batchv1.JobStatus{Conditions: []batchv1.JobCondition{
			{Type: batchv1.JobFailureTarget, Status: corev1.ConditionTrue}, {Type: batchv1.JobFailed, Status: corev1.ConditionTrue}}}}
	return []runtime.Object{node, ns, pod, dep, pdb, job}
}

// checkInOrder checks that out has each of lines, in that order.
func checkInOrder(t *testing.T, out string, lines []string) {
	t.Helper()
	rest := out
	for _, want := range lines {
		i := strings.Index(rest, want+"\n")
		if i < 0 {
			t.Fatalf("output lacks %q after the lines before it:\n%s", want, out)
		}
		rest = rest[i+len(want)+1:]
	}
}

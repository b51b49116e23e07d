package klm_test

import (
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/yaml"
)

// The runtime's resources the tests look at.
var (
	configMaps  = schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}
	secrets     = schema.GroupVersionResource{Version: "v1", Resource: "secrets"}
	services    = schema.GroupVersionResource{Version: "v1", Resource: "services"}
	namespaces  = schema.GroupVersionResource{Version: "v1", Resource: "namespaces"}
	deployments = schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"}
	hpasV2      = schema.GroupVersionResource{Group: "autoscaling", Version: "v2", Resource: "horizontalpodautoscalers"}
)

// doc renders an object of a layer as YAML.
func doc(apiVersion, kind, ns, name string, fields map[string]any) string {
	obj := map[string]any{"apiVersion": apiVersion, "kind": kind,
		"metadata": map[string]any{"name": name, "namespace": ns, "labels": map[string]any{"layer": "label"}}}
	for k, v := range fields {
		obj[k] = v
	}
	out, err := yaml.Marshal(obj)
	if err != nil {
		panic(err) // maps of strings always marshal
	}
	return string(out)
}

func configMap(ns, name string, data map[string]string) string {
	if data == nil {
		return doc("v1", "ConfigMap", ns, name, nil)
	}
	return doc("v1", "ConfigMap", ns, name, map[string]any{"data": data})
}

func secret(ns, name string) string {
	return doc("v1", "Secret", ns, name, map[string]any{"stringData": map[string]string{"k": "v"}})
}

func service(ns, name string) string {
	return doc("v1", "Service", ns, name, map[string]any{"spec": map[string]any{
		"selector": map[string]string{"app": name},
		"ports":    []any{map[string]any{"port": 443, "targetPort": 9443}},
	}})
}

// deployment has one container of image and an init container of init.
func deployment(ns, name, image, init string) string {
	pod := map[string]any{
		"containers":     []any{map[string]any{"name": "main", "image": image}},
		"initContainers": []any{map[string]any{"name": "init", "image": init}},
	}
	return doc("apps/v1", "Deployment", ns, name, map[string]any{"spec": map[string]any{
		"selector": map[string]any{"matchLabels": map[string]string{"app": name}},
		"template": map[string]any{"metadata": map[string]any{"labels": map[string]string{"app": name}}, "spec": pod},
	}})
}

// hpa is a HorizontalPodAutoscaler at apiVersion autoscaling/v1 or v2.
func hpa(ns, name, apiVersion string) string {
	return doc(apiVersion, "HorizontalPodAutoscaler", ns, name, map[string]any{"spec": map[string]any{
		"scaleTargetRef": map[string]any{"apiVersion": "apps/v1", "kind": "Deployment", "name": name},
		"minReplicas":    1, "maxReplicas": 2,
	}})
}

// get returns the runtime's object of gvr, or nil if there is none.
func (f *fixture) get(gvr schema.GroupVersionResource, ns, name string) *unstructured.Unstructured {
	f.t.Helper()
	u, err := f.dyn.Resource(gvr).Namespace(ns).Get(f.t.Context(), name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil
	}
	must(f.t, err)
	return u
}

// markAvailable writes the conditions that the Deployment controller
// writes once a Deployment's new ReplicaSet is available: none runs here.
func (f *fixture) markAvailable(name string) {
	f.t.Helper()
	f.setConditions(name, []appsv1.DeploymentCondition{
		{Type: appsv1.DeploymentAvailable, Status: corev1.ConditionTrue, Reason: "MinimumReplicasAvailable"},
		{Type: appsv1.DeploymentProgressing, Status: corev1.ConditionTrue, Reason: "NewReplicaSetAvailable"},
	})
}

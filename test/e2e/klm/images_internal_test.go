package klm

import (
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

func TestLocalizeImages(t *testing.T) {
	const mirror = "mirror.example.org/kyma/snatch-webhook:1.0.0"
	for _, tc := range []struct {
		name, kind, image, want string
	}{
		{"same_name_and_tag_replaced", "Deployment", "europe-docker.pkg.dev/kyma-project/prod/snatch-webhook:1.0.0", mirror},
		{"digest_ignored_in_the_match", "StatefulSet",
			"europe-docker.pkg.dev/prod/snatch-webhook:1.0.0@sha256:" + sha, mirror},
		{"other_tag_kept", "Deployment", "europe-docker.pkg.dev/prod/snatch-webhook:1.0.1",
			"europe-docker.pkg.dev/prod/snatch-webhook:1.0.1"},
		{"other_name_kept", "Deployment", "europe-docker.pkg.dev/prod/cabundle-syncer:1.0.0",
			"europe-docker.pkg.dev/prod/cabundle-syncer:1.0.0"},
		{"other_kinds_kept", "DaemonSet", "europe-docker.pkg.dev/prod/snatch-webhook:1.0.0",
			"europe-docker.pkg.dev/prod/snatch-webhook:1.0.0"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			obj := workload(tc.kind, tc.image)
			if err := localizeImages([]string{mirror}, []*unstructured.Unstructured{obj}); err != nil {
				t.Fatal(err)
			}
			for _, path := range [][]string{
				{"spec", "template", "spec", "containers"},
				{"spec", "template", "spec", "initContainers"},
			} {
				containers, _, _ := unstructured.NestedSlice(obj.Object, path...)
				c := containers[0].(map[string]any)
				env := c["env"].([]any)[0].(map[string]any)
				if c["image"] != tc.want || env["value"] != tc.want {
					t.Errorf("%s: image %v, env %v; want %s for both", path[3], c["image"], env["value"], tc.want)
				}
			}
		})
	}
}

const sha = "0000000000000000000000000000000000000000000000000000000000000000"

// workload is a kind with a Pod template whose container and init
// container both run image and name it in an env value.
func workload(kind, image string) *unstructured.Unstructured {
	container := func() any {
		return map[string]any{"name": "c", "image": image, "env": []any{map[string]any{"name": "IMG", "value": image}}}
	}
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "apps/v1", "kind": kind,
		"spec": map[string]any{"template": map[string]any{"spec": map[string]any{
			"containers": []any{container()}, "initContainers": []any{container()},
		}}},
	}}
}

func TestLocalizeImagesRejectsAnInvalidReference(t *testing.T) {
	if err := localizeImages([]string{"not an image"}, nil); err == nil {
		t.Error("an invalid localized image was accepted")
	}
}

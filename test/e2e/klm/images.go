package klm

import (
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// localizeImages rewrites the images of the containers and init containers
// of every Deployment and StatefulSet, and container env values that are
// image references, to the localized image of the same name and tag, as
// internal/imagerewrite does. KLM parses references with
// distribution/reference; nameAndTag reads only the last path element,
// which is all the match compares.
func localizeImages(localized []string, objs []*unstructured.Unstructured) error {
	if len(localized) == 0 {
		return nil
	}
	byNameAndTag := map[string]string{}
	for _, ref := range localized {
		nt, ok := nameAndTag(ref)
		if !ok {
			return fmt.Errorf("localized image %q is not an image reference", ref)
		}
		byNameAndTag[nt] = ref
	}
	for _, obj := range objs {
		if obj.GetKind() != "Deployment" && obj.GetKind() != "StatefulSet" {
			continue
		}
		for _, field := range []string{"containers", "initContainers"} {
			if err := rewriteContainers(obj, field, byNameAndTag); err != nil {
				return fmt.Errorf("localize images of %s %s/%s: %w", obj.GetKind(), obj.GetNamespace(), obj.GetName(), err)
			}
		}
	}
	return nil
}

func rewriteContainers(obj *unstructured.Unstructured, field string, byNameAndTag map[string]string) error {
	path := []string{"spec", "template", "spec", field}
	containers, found, err := unstructured.NestedSlice(obj.Object, path...)
	if err != nil || !found {
		return err
	}
	for _, c := range containers {
		container, ok := c.(map[string]any)
		if !ok {
			return fmt.Errorf("%s holds a %T", field, c)
		}
		if image, ok := container["image"].(string); ok {
			container["image"] = localized(image, byNameAndTag)
		}
		env, _ := container["env"].([]any)
		for _, e := range env {
			if v, ok := e.(map[string]any); ok {
				if value, ok := v["value"].(string); ok {
					v["value"] = localized(value, byNameAndTag)
				}
			}
		}
	}
	return unstructured.SetNestedSlice(obj.Object, containers, path...)
}

// localized returns the localized image for ref, or ref.
func localized(ref string, byNameAndTag map[string]string) string {
	if nt, ok := nameAndTag(ref); ok {
		if target, ok := byNameAndTag[nt]; ok {
			return target
		}
	}
	return ref
}

// nameAndTag returns the last path element of an image reference with its
// tag, without the digest: "kim-snatch:1.0.0" for
// "europe-docker.pkg.dev/kyma-project/prod/kim-snatch:1.0.0@sha256:...".
func nameAndTag(ref string) (string, bool) {
	if ref == "" || strings.ContainsAny(ref, " \t\n") || strings.Contains(ref, "://") {
		return "", false
	}
	withoutDigest, _, _ := strings.Cut(ref, "@")
	nt := withoutDigest[strings.LastIndex(withoutDigest, "/")+1:]
	return nt, nt != "" && !strings.HasPrefix(nt, ":")
}

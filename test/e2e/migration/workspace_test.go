package migration

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"sigs.k8s.io/yaml"

	"github.com/kyma-project/kim-snatch/test/e2e/kimsnatch"
)

// The images `make images` writes, and the patches with which
// test/e2e/overlay places Pods on the real node: its system Pods tolerate
// the node's taint and select it, and never pull.
const (
	imagesTag        = "e2e"
	oldImage         = "europe-docker.pkg.dev/kyma-project/prod/kim-snatch"
	systemNodePatch  = "system-node.yaml"
	systemCronJob    = "system-node-cronjob.yaml"
	overlayDir       = "test/e2e/overlay"
	oldManifestInDir = "deploy/migration/kim-snatch/kim-snatch.yaml"
)

// prepareWorkspace writes what the guide's commands read into e.workspace:
// a copy of deploy/ whose bases run the local images on the real node, as
// the guide's "set the images in an overlay first" asks, and the old
// release's manifest, rendered through a kustomization that does the same
// for the old Deployment. The guide's commands stay as written.
func (e *env) prepareWorkspace(ctx context.Context, root string) error {
	deploy := filepath.Join(e.workspace, "deploy")
	if err := os.CopyFS(deploy, os.DirFS(filepath.Join(root, "deploy"))); err != nil {
		return err
	}
	for base, image := range map[string]string{"webhook": "snatch-webhook", "syncer": "cabundle-syncer"} {
		if err := placeOnNode(root, filepath.Join(deploy, base), image, image); err != nil {
			return fmt.Errorf("deploy/%s: %w", base, err)
		}
	}

	// The old release, as an operator copies it, with the stand-in's image.
	old := filepath.Join(e.workspace, "old-release")
	if err := writeFile(filepath.Join(old, "kim-snatch.yaml"), kimsnatch.InstallYAML()); err != nil {
		return err
	}
	if err := writeFile(filepath.Join(old, "kustomization.yaml"), []byte("resources:\n  - kim-snatch.yaml\n")); err != nil {
		return err
	}
	if err := placeOnNode(root, old, oldImage, "kim-snatch"); err != nil {
		return fmt.Errorf("the old release: %w", err)
	}
	rendered, err := e.kubectl(ctx, nil, "kustomize", old)
	if err != nil {
		return err
	}
	e.oldManifest = filepath.Join(e.workspace, oldManifestInDir)
	return writeFile(e.oldManifest, []byte(rendered))
}

// placeOnNode adds to the kustomization in dir the image mapping of name to
// the local image local:e2e, and test/e2e/overlay's patches that put
// Deployments and CronJobs on the system node.
func placeOnNode(root, dir, name, local string) error {
	path := filepath.Join(dir, "kustomization.yaml")
	data, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	var k map[string]any
	if err := yaml.Unmarshal(data, &k); err != nil {
		return err
	}
	var images []any
	mapped := false
	for _, img := range asList(k["images"]) {
		if m, ok := img.(map[string]any); ok && m["name"] == name {
			m["newName"], m["newTag"], mapped = local, imagesTag, true
		}
		images = append(images, img)
	}
	if !mapped {
		images = append(images, map[string]any{"name": name, "newName": local, "newTag": imagesTag})
	}
	k["images"] = images
	patches := asList(k["patches"])
	for file, kind := range map[string]string{systemNodePatch: "Deployment", systemCronJob: "CronJob"} {
		patch, err := os.ReadFile(filepath.Join(root, overlayDir, file))
		if err != nil {
			return err
		}
		if err := writeFile(filepath.Join(dir, file), patch); err != nil {
			return err
		}
		patches = append(patches, map[string]any{"path": file, "target": map[string]any{"kind": kind}})
	}
	k["patches"] = patches
	out, err := yaml.Marshal(k)
	if err != nil {
		return err
	}
	return writeFile(path, out)
}

func asList(v any) []any {
	l, _ := v.([]any)
	return l
}

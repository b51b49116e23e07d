package migration

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"

	"sigs.k8s.io/yaml"

	"github.com/kyma-project/kim-snatch/test/e2e/kimsnatch"
	"github.com/kyma-project/kim-snatch/test/framework"
	"github.com/kyma-project/kim-snatch/test/process"
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
// a copy of deploy/ whose bases run the local images on the real node, the
// release files that the steps name, rendered from those bases as a
// release renders them, and the old release's manifest, rendered through a
// kustomization that does the same for the old Deployment. The guide's
// commands stay as written.
func (e *env) prepareWorkspace(ctx context.Context, root string, steps []step) error {
	deploy := filepath.Join(e.workspace, "deploy")
	if err := os.CopyFS(deploy, os.DirFS(filepath.Join(root, "deploy"))); err != nil {
		return err
	}
	for base, image := range map[string]string{"webhook": "snatch-webhook", "syncer": "cabundle-syncer"} {
		if err := placeOnNode(root, filepath.Join(deploy, base), image, image); err != nil {
			return fmt.Errorf("deploy/%s: %w", base, err)
		}
	}
	if err := e.writeReleases(ctx, root, steps); err != nil {
		return err
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

// releaseDir matches a release's directory as the guide names it, once
// its version variables are expanded: dist/<binary>/<version>/, where
// `make release` writes its files.
var releaseDir = regexp.MustCompile(`\bdist/(snatch-webhook|cabundle-syncer)/([^/\s]+)/`)

// guideVersions are the release versions the scenario installs, in the
// variables that the guide's "Before you start" has the operator export
// and its steps read. Each step runs with them in its environment.
var guideVersions = map[string]string{"WEBHOOK_VERSION": "v0.1.0", "SYNCER_VERSION": "v0.1.0"}

// guideEnv returns guideVersions as environment entries.
func guideEnv() []string {
	var env []string
	for k, v := range guideVersions {
		env = append(env, k+"="+v)
	}
	return env
}

// writeReleases writes the manifests of each release whose files the
// steps name into the workspace's dist/, with `hack/release/release.sh --manifests`
// run on the workspace: the release's own rendering, of bases that run the
// local images. The release pins the registry's image, which these bases
// no longer name, so the local image stays.
func (e *env) writeReleases(ctx context.Context, root string, steps []step) error {
	kubectl, err := framework.Kubectl()
	if err != nil {
		return err
	}
	script, err := os.ReadFile(filepath.Join(root, "hack", "release", "release.sh"))
	if err != nil {
		return err
	}
	release := filepath.Join(e.workspace, "hack", "release", "release.sh")
	if err := writeFile(release, script); err != nil {
		return err
	}
	// The script takes the repository of the runbook links from go.mod, as
	// in the checkout the guide runs in.
	gomod, err := os.ReadFile(filepath.Join(root, "go.mod"))
	if err != nil {
		return err
	}
	if err := writeFile(filepath.Join(e.workspace, "go.mod"), gomod); err != nil {
		return err
	}
	if err := os.Chmod(release, 0o755); err != nil {
		return err
	}
	written := map[string]bool{}
	for _, st := range steps {
		script := os.Expand(st.script, func(name string) string {
			if v, ok := guideVersions[name]; ok {
				return v
			}
			return "$" + name
		})
		for _, m := range releaseDir.FindAllStringSubmatch(script, -1) {
			dir := filepath.Join(e.workspace, "dist", m[1], m[2])
			if written[dir] {
				continue
			}
			written[dir] = true
			run := process.Command{Env: []string{"KUBECTL=" + kubectl}}
			if _, err := run.Run(ctx, release, "--manifests", dir, m[1], m[2]); err != nil {
				return err
			}
		}
	}
	if len(written) == 0 {
		return fmt.Errorf("the guide's steps name no release files dist/<binary>/<version>/; the scenario would not install from a release")
	}
	return nil
}

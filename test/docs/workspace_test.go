package docs

import (
	"bytes"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"

	"github.com/kyma-project/kim-snatch/test/framework"
	"github.com/kyma-project/kim-snatch/test/process"
	"github.com/kyma-project/kim-snatch/test/tools"
)

// releaseFile matches what the documents name as a file of a release: the
// directory dist/<binary>/<version>/ that `make release` writes, in the
// repository's root or in an overlay's directory, and the same file in the
// GitHub release of the tag <binary>/<version>.
var (
	releaseFile = regexp.MustCompile(`(?:^|/)dist/(snatch-webhook|cabundle-syncer)/([^/]+)/([^/]+)$`)
	releaseURL  = regexp.MustCompile(`^https://github\.com/kyma-project/kim-snatch/releases/download/(snatch-webhook|cabundle-syncer)/([^/]+)/([^/]+)$`)
)

// operatorFiles are the files the documents have the operator bring, by
// path, and what stands in for them here: the manifest of the kim-snatch
// release that runs in the cluster (docs/migration.md, "Before you start").
var operatorFiles = map[string]string{
	"deploy/migration/kim-snatch/kim-snatch.yaml": oldRelease,
}

// workspace is what the documented commands read, outside the repository:
// a copy of deploy/, and on demand the files of a release, rendered by
// `hack/release/release.sh --manifests` for the version the command names, and the
// files the operator brings.
type workspace struct {
	t       testing.TB
	root    string // the repository
	dir     string
	kubectl string
}

func newWorkspace(t testing.TB) *workspace {
	t.Helper()
	kubectl, err := framework.Kubectl()
	if err != nil {
		t.Fatal(err)
	}
	w := &workspace{t: t, root: tools.MustRepoRoot(t), dir: t.TempDir(), kubectl: kubectl}
	if err := os.CopyFS(filepath.Join(w.dir, "deploy"), os.DirFS(filepath.Join(w.root, "deploy"))); err != nil {
		t.Fatal(err)
	}
	return w
}

// provide makes the file or directory rel (slash-separated, relative to the
// repository's root, or a release URL) exist in the workspace and returns
// its path there. It fails if neither the repository, nor a release, nor
// the operator provides it.
func (w *workspace) provide(rel string) (string, error) {
	if m := releaseURL.FindStringSubmatch(rel); m != nil {
		rel = path.Join("dist", m[1], m[2], m[3])
	} else if strings.Contains(rel, "://") {
		return "", fmt.Errorf("%s: only the files of a release may be named by URL", rel)
	}
	rel = path.Clean(rel)
	if rel == ".." || strings.HasPrefix(rel, "../") || path.IsAbs(rel) {
		return "", fmt.Errorf("%s lies outside the repository", rel)
	}
	dst := filepath.Join(w.dir, filepath.FromSlash(rel))
	if _, err := os.Stat(dst); err == nil {
		return dst, nil
	}
	switch m := releaseFile.FindStringSubmatch(rel); {
	case m != nil:
		return dst, w.releaseFile(m[1], m[2], m[3], dst)
	case operatorFiles[rel] != "":
		return dst, copyFile(filepath.Join(w.root, operatorFiles[rel]), dst)
	}
	src := filepath.Join(w.root, filepath.FromSlash(rel))
	info, err := os.Stat(src)
	if err != nil {
		return "", fmt.Errorf("%s: neither the repository nor a release provides it", rel)
	}
	if info.IsDir() {
		return dst, os.CopyFS(dst, os.DirFS(src))
	}
	return dst, copyFile(src, dst)
}

// releaseFile writes file of the release <binary>/<version> to dst, as
// hack/release/release.sh renders it.
func (w *workspace) releaseFile(binary, version, file, dst string) error {
	out := filepath.Join(w.t.TempDir(), "release")
	c := process.Command{Env: []string{"KUBECTL=" + w.kubectl}}
	if _, err := c.Run(w.t.Context(), filepath.Join(w.root, "hack", "release", "release.sh"), "--manifests", out, binary, version); err != nil {
		return err
	}
	src := filepath.Join(out, file)
	if _, err := os.Stat(src); err != nil {
		written, _ := filepath.Glob(filepath.Join(out, "*"))
		for i := range written {
			written[i] = filepath.Base(written[i])
		}
		return fmt.Errorf("the release %s/%s has no manifest %s; hack/release/release.sh writes %v", binary, version, file, written)
	}
	return copyFile(src, dst)
}

// render returns the objects a kubectl -k or -f argument names, as YAML.
// For a kustomization, the files it lists that the repository lacks are
// provided first.
func (w *workspace) render(flag, rel string) ([]byte, error) {
	p, err := w.provide(rel)
	if err != nil {
		return nil, err
	}
	if flag == "-k" {
		if err := w.provideResources(p); err != nil {
			return nil, err
		}
		return framework.Kustomize(p)
	}
	return readManifests(p)
}

// provideResources provides each file that the kustomization in dir lists
// as a resource and that is not there.
func (w *workspace) provideResources(dir string) error {
	data, err := os.ReadFile(filepath.Join(dir, "kustomization.yaml"))
	if err != nil {
		return err
	}
	var k struct {
		Resources []string `json:"resources"`
	}
	if err := yaml.Unmarshal(data, &k); err != nil {
		return err
	}
	rel, err := filepath.Rel(w.dir, dir)
	if err != nil {
		return err
	}
	for _, r := range k.Resources {
		if _, err := os.Stat(filepath.Join(dir, r)); err == nil || strings.Contains(r, "://") {
			continue
		}
		if _, err := w.provide(path.Join(filepath.ToSlash(rel), r)); err != nil {
			return fmt.Errorf("%s lists %s: %w", rel, r, err)
		}
	}
	return nil
}

// readManifests reads a file, or the YAML and JSON files of a directory as
// kubectl -f does.
func readManifests(p string) ([]byte, error) {
	info, err := os.Stat(p)
	if err != nil {
		return nil, err
	}
	if !info.IsDir() {
		return os.ReadFile(p)
	}
	var out bytes.Buffer
	err = filepath.WalkDir(p, func(f string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !slices.Contains([]string{".yaml", ".yml", ".json"}, filepath.Ext(f)) {
			return err
		}
		b, err := os.ReadFile(f)
		out.WriteString("\n---\n")
		out.Write(b)
		return err
	})
	return out.Bytes(), err
}

func copyFile(src, dst string) error {
	data, err := os.ReadFile(src)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return err
	}
	return os.WriteFile(dst, data, 0o644)
}

package manifests

import (
	"crypto/sha256"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kyma-project/kim-snatch/test/process"
	"github.com/kyma-project/kim-snatch/test/supplychain"
)

// The tests of hack/release/release.sh --module, the module kim-snatch that
// lifecycle-manager installs on every Kyma runtime (docs/releasing.md, "The
// module"): this file makes module releases, module_test.go holds what one
// writes, module_runtime_test.go applies it to a runtime without
// prometheus-operator, module_refusals_test.go holds what it refuses.

const (
	moduleName = "kim-snatch"
	// moduleAnnotation records on every object the module version it came
	// from.
	moduleAnnotation = "kim-snatch.kyma-project.io/module-version"
	versionLabel     = "app.kubernetes.io/version"
)

// moduleBinaries are the binaries of the module, in the order of its
// manifest.
var moduleBinaries = []string{"snatch-webhook", "cabundle-syncer"}

// binaryRelease writes into the clone's dist/ what a module release reads
// of the release of binary at version, as make release leaves it:
// install.yaml (and snatch-webhook's migration.yaml) as hack/release/release.sh
// --manifests renders them, pinned to digest when one is given as the
// release workflow pins them, and SHA256SUMS, signed with the release key;
// and it tags the version at HEAD. It builds no binary, which a module
// release does not read; TestReleaseWritesPinnedChecksummedSignedArtefacts
// holds make release to writing these files.
func (r *releaser) binaryRelease(t *testing.T, binary, version, digest string) string {
	t.Helper()
	dir := filepath.Join(r.repo, "dist", binary, version)
	r.command("DIGEST="+digest).MustRun(t, "hack/release/release.sh", "--manifests", dir, binary, version)
	r.signSums(t, dir, r.key)
	supplychain.Git(t, r.repo, "tag", binary+"/"+version)
	return dir
}

// signSums writes the SHA256SUMS of the manifests in dir and signs it with
// key, as hack/release/release.sh does.
func (r *releaser) signSums(t *testing.T, dir, key string) {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(dir, "*.yaml"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no manifests in %s: %v", dir, err)
	}
	var sums strings.Builder
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(&sums, "%x  %s\n", sha256.Sum256(b), filepath.Base(f))
	}
	writeFile(t, filepath.Join(dir, "SHA256SUMS"), sums.String())
	supplychain.MustCosign(t, dir, "sign-blob", "--yes", "--key", key, "--tlog-upload=false",
		"--bundle", "SHA256SUMS.sigstore.json", "SHA256SUMS")
}

// module runs hack/release/release.sh --module with args in the clone.
func (r *releaser) module(t testing.TB, args ...string) (process.Result, error) {
	t.Helper()
	return r.script(t, append([]string{"--module"}, args...)...)
}

// moduleRelease is what one module release wrote, read back.
type moduleRelease struct {
	dir                string
	version            string
	module, monitoring []*unstructured.Unstructured // in the order of their files
	binaryOf           map[string]string            // object id -> its binary
	install            map[string][]*unstructured.Unstructured
	versions           map[string]string // binary -> its version
}

// releaseModule makes the module release version of the binary versions
// whose releases are in the clone, and reads it back.
func (r *releaser) releaseModule(t *testing.T, version, webhook, syncer string) *moduleRelease {
	t.Helper()
	if _, err := r.module(t, version, webhook, syncer); err != nil {
		t.Fatal(err)
	}
	m := &moduleRelease{
		dir:      filepath.Join(r.repo, "dist", moduleName, version),
		version:  version,
		binaryOf: map[string]string{},
		install:  map[string][]*unstructured.Unstructured{},
		versions: map[string]string{"snatch-webhook": webhook, "cabundle-syncer": syncer},
	}
	m.module = readObjects(t, filepath.Join(m.dir, "module.yaml"))
	m.monitoring = readObjects(t, filepath.Join(m.dir, "monitoring.yaml"))
	for _, b := range moduleBinaries {
		m.install[b] = readObjects(t, filepath.Join(r.repo, "dist", b, m.versions[b], "install.yaml"))
		for _, o := range m.install[b] {
			m.binaryOf[id(o)] = b
		}
	}
	return m
}

// isMonitoring tells the objects of prometheus-operator's group, which a
// plain runtime has no CRD for.
func isMonitoring(o *unstructured.Unstructured) bool {
	return o.GroupVersionKind().Group == "monitoring.coreos.com"
}

// without returns the objects of objs for which drop is false.
func without(objs []*unstructured.Unstructured, drop func(*unstructured.Unstructured) bool,
) []*unstructured.Unstructured {
	return slices.DeleteFunc(slices.Clone(objs), drop)
}

// templateMeta are where an object of the module holds the metadata of a
// template: a Pod template's, and a CronJob's Job template's.
var templateMeta = [][]string{
	{"spec", "template", "metadata"},
	{"spec", "jobTemplate", "metadata"},
	{"spec", "jobTemplate", "spec", "template", "metadata"},
}

// at returns path with key appended, leaving path as it is.
func at(path []string, key string) []string {
	return append(slices.Clone(path), key)
}

// unmarked returns a copy of o without what a module release adds to it:
// the version label, on the object and its Pod templates, and the module
// annotation.
func unmarked(o *unstructured.Unstructured) *unstructured.Unstructured {
	c := o.DeepCopy()
	deleteKey(c, versionLabel, "metadata", "labels")
	deleteKey(c, moduleAnnotation, "metadata", "annotations")
	for _, p := range templateMeta {
		deleteKey(c, versionLabel, at(p, "labels")...)
	}
	return c
}

// deleteKey deletes key from the map at path in o, and the map when that
// leaves it empty.
func deleteKey(o *unstructured.Unstructured, key string, path ...string) {
	m, ok, _ := unstructured.NestedStringMap(o.Object, path...)
	if !ok {
		return
	}
	delete(m, key)
	if len(m) == 0 {
		unstructured.RemoveNestedField(o.Object, path...)
		return
	}
	_ = unstructured.SetNestedStringMap(o.Object, m, path...)
}

package manifests

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kyma-project/kim-snatch/test/process"
	"github.com/kyma-project/kim-snatch/test/supplychain"
)

// hack/release/release.sh --module refuses a module version lifecycle-manager does
// not take or that is tagged, a binary version a label cannot hold or that
// is not released, a dirty tree, and a binary release that is missing, not
// signed with the key at its tag, changed after signing or another
// version's; and writes nothing to dist/kim-snatch/ then.
func TestModuleReleaseRefusesBadInputWithoutWritingDist(t *testing.T) {
	r := newReleaser(t)
	webhook := r.binaryRelease(t, "snatch-webhook", "v0.1.0", "")
	syncer := r.binaryRelease(t, "cabundle-syncer", "v0.1.0", "")
	install := filepath.Join(webhook, "install.yaml")
	shipped := readFile(t, install)
	git := func(args ...string) { supplychain.Git(t, r.repo, args...) }
	other := filepath.Join(r.repo, "dist", "cabundle-syncer", "v0.2.0")
	for _, tt := range []struct {
		name, want  string
		args        []string // module, webhook and syncer version
		setup, undo func()
	}{
		{name: "module_version_with_a_v_is_refused", args: []string{"v2.0.0", "v0.1.0", "v0.1.0"},
			want: "is not one lifecycle-manager takes"},
		{name: "module_prerelease_of_two_identifiers_is_refused", args: []string{"2.0.0-rc.1", "v0.1.0", "v0.1.0"},
			want: "is not one lifecycle-manager takes"},
		{name: "module_prerelease_in_upper_case_is_refused", args: []string{"2.0.0-RC1", "v0.1.0", "v0.1.0"},
			want: "is not one lifecycle-manager takes"},
		{name: "binary_version_with_build_metadata_is_refused", args: []string{"2.0.0", "v0.1.0+abc", "v0.1.0"},
			want: "has build metadata"},
		{name: "binary_version_not_released_is_refused", args: []string{"2.0.0", "v0.1.0", "v0.9.0"},
			want: "cabundle-syncer/v0.9.0 is not tagged"},
		{name: "module_version_already_tagged_is_refused", args: []string{"2.0.0", "v0.1.0", "v0.1.0"},
			want:  "kim-snatch/2.0.0 is already tagged",
			setup: func() { git("tag", "kim-snatch/2.0.0") }, undo: func() { git("tag", "-d", "kim-snatch/2.0.0") }},
		{name: "dirty_tree_is_refused", args: []string{"2.0.0", "v0.1.0", "v0.1.0"}, want: "not clean",
			setup: func() { writeFile(t, filepath.Join(r.repo, "stray.txt"), "x") },
			undo:  func() { _ = os.Remove(filepath.Join(r.repo, "stray.txt")) }},
		{name: "binary_release_missing_is_refused", args: []string{"2.0.0", "v0.4.0", "v0.1.0"},
			want:  "dist/snatch-webhook/v0.4.0/install.yaml is missing",
			setup: func() { git("tag", "snatch-webhook/v0.4.0") }, undo: func() { git("tag", "-d", "snatch-webhook/v0.4.0") }},
		{name: "install_yaml_changed_after_signing_is_refused", args: []string{"2.0.0", "v0.1.0", "v0.1.0"},
			want:  "is not the install.yaml its SHA256SUMS lists",
			setup: func() { writeFile(t, install, shipped+"# changed\n") }, undo: func() { writeFile(t, install, shipped) }},
		{name: "sums_signed_with_another_key_is_refused", args: []string{"2.0.0", "v0.1.0", "v0.1.0"},
			want:  "does not verify with the key at the tag cabundle-syncer/v0.1.0",
			setup: func() { r.signSums(t, syncer, supplychain.ThrowawayKey(t)) },
			undo:  func() { r.signSums(t, syncer, r.key) }},
		{name: "install_yaml_of_another_version_is_refused", args: []string{"2.0.0", "v0.1.0", "v0.2.0"},
			want: "is not the install.yaml of cabundle-syncer v0.2.0",
			setup: func() {
				if err := os.CopyFS(other, os.DirFS(syncer)); err != nil {
					t.Fatal(err)
				}
				git("tag", "cabundle-syncer/v0.2.0")
			},
			undo: func() { _ = os.RemoveAll(other); git("tag", "-d", "cabundle-syncer/v0.2.0") }},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if tt.setup != nil {
				tt.setup()
				defer tt.undo()
			}
			res, err := r.module(t, tt.args...)
			if err == nil || !strings.Contains(res.Stderr, tt.want) {
				t.Fatalf("--module %v: %s\nwant a failure saying %q", tt.args, res, tt.want)
			}
			if _, err := os.Stat(filepath.Join(r.repo, "dist", moduleName, tt.args[0])); err == nil {
				t.Errorf("a refused module release wrote dist/%s/%s", moduleName, tt.args[0])
			}
		})
	}
}

// hack/release/release.sh --check --module runs a module release's checks alone,
// before the binary releases are downloaded: it passes on released binary
// versions and writes nothing, and refuses what a module release refuses.
func TestModuleReleaseCheckRunsTheChecksAlone(t *testing.T) {
	r := newReleaser(t)
	supplychain.Git(t, r.repo, "tag", "snatch-webhook/v0.1.0")
	supplychain.Git(t, r.repo, "tag", "cabundle-syncer/v0.1.0")
	if res, err := r.module(t, "2.0.0", "v0.1.0", "v0.1.0"); err == nil || !strings.Contains(res.Stderr, "is missing") {
		t.Fatalf("--module without the binary releases in dist/: %s\nwant a refusal", res)
	}
	check := func(args ...string) (process.Result, error) {
		return r.script(t, append([]string{"--check", "--module"}, args...)...)
	}
	if _, err := check("2.0.0", "v0.1.0", "v0.1.0"); err != nil {
		t.Fatalf("--check --module of released binaries: %v", err)
	}
	if _, err := os.Stat(filepath.Join(r.repo, "dist", moduleName)); err == nil {
		t.Errorf("--check --module wrote dist/%s", moduleName)
	}
	if res, err := check("2.0.0", "v0.1.0", "v0.9.0"); err == nil || !strings.Contains(res.Stderr, "is not tagged") {
		t.Errorf("--check --module of an unreleased binary: %s", res)
	}
}

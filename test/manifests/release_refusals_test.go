package manifests

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/kyma-project/kim-snatch/test/framework"
	"github.com/kyma-project/kim-snatch/test/process"
	"github.com/kyma-project/kim-snatch/test/supplychain"
	"github.com/kyma-project/kim-snatch/test/tools"
)

// The tests of hack/release/release.sh: this file drives it and holds its refusals,
// release_test.go what a release writes.

// releaser runs hack/release/release.sh in a clone of the repository, with the
// tools and a throwaway key, as make release does.
type releaser struct {
	repo string
	key  string
	env  []string // KUBECTL, the tools and the key
}

func newReleaser(t *testing.T) *releaser {
	t.Helper()
	if testing.Short() {
		t.Skip("builds four static binaries")
	}
	kubectl, err := framework.Kubectl()
	if err != nil {
		t.Fatal(err)
	}
	key := supplychain.ThrowawayKey(t)
	env := append([]string{"KUBECTL=" + kubectl}, supplychain.ReleaseEnv(t, key)...)
	return &releaser{repo: cloneForRelease(t, key), key: key, env: env}
}

// command runs in the clone with the release's environment and env
// added.
func (r *releaser) command(env ...string) process.Command {
	return process.Command{Dir: r.repo, Env: append(slices.Clone(r.env), env...)}
}

// script runs hack/release/release.sh with args in the clone.
func (r *releaser) script(t testing.TB, args ...string) (process.Result, error) {
	t.Helper()
	return r.command().Run(t.Context(), "hack/release/release.sh", args...)
}

// release runs hack/release/release.sh binary version in the clone with env added.
func (r *releaser) release(t testing.TB, binary, version string, env ...string) (process.Result, error) {
	t.Helper()
	return r.command(env...).Run(t.Context(), "hack/release/release.sh", binary, version)
}

// make release refuses a bad version, an unknown binary, a missing or
// incomplete CHANGELOG section, a dirty tree, a released tag, a commit
// without the trusted key and a signing key that is not the trusted one,
// and writes nothing to dist/ then.
func TestReleaseRefusesBadInputWithoutWritingDist(t *testing.T) {
	r := newReleaser(t)
	repo := r.repo
	git := func(args ...string) { supplychain.Git(t, repo, args...) }
	for _, tt := range []struct {
		name, binary, version, want string
		env                         []string
		setup, undo                 func()
	}{
		{name: "not_semver_is_refused", binary: "snatch-webhook", version: "1.0", want: "is not semver"},
		{name: "leading_zero_is_refused", binary: "snatch-webhook", version: "v0.01.0", want: "is not semver"},
		{name: "unknown_binary_is_refused", binary: "operator", version: "v0.1.0", want: "unknown binary"},
		{name: "no_changelog_section_is_refused", binary: "snatch-webhook", version: "v9.9.9", want: "has no section '### v9.9.9'"},
		{name: "changelog_section_only_headings_is_refused", binary: "snatch-webhook", version: "v0.0.9", want: "is empty",
			setup: func() { commitChangelogSection(t, repo, "snatch-webhook", "v0.0.9", changelogHeadings("")) },
			undo:  func() { git("reset", "-q", "--hard", "HEAD~1") }},
		{name: "changelog_section_without_a_heading_is_refused", binary: "cabundle-syncer", version: "v0.0.9", want: "no heading '#### Alerts'",
			setup: func() {
				commitChangelogSection(t, repo, "cabundle-syncer", "v0.0.9", strings.Replace(changelogHeadings("none"), "#### Alerts\n", "", 1))
			},
			undo: func() { git("reset", "-q", "--hard", "HEAD~1") }},
		{name: "dirty_tree_is_refused", binary: "snatch-webhook", version: "v0.1.0", want: "not clean",
			setup: func() { writeFile(t, filepath.Join(repo, "stray.txt"), "x") },
			undo:  func() { _ = os.Remove(filepath.Join(repo, "stray.txt")) }},
		{name: "already_tagged_is_refused", binary: "cabundle-syncer", version: "v0.1.0", want: "already tagged",
			setup: func() { git("tag", "cabundle-syncer/v0.1.0") },
			undo:  func() { git("tag", "-d", "cabundle-syncer/v0.1.0") }},
		{name: "no_trusted_key_is_refused", binary: "snatch-webhook", version: "v0.1.0", want: "cosign.pub is not committed",
			setup: func() { git("rm", "-q", supplychain.TrustedKeyFile); git("commit", "-qm", "no key") },
			undo:  func() { git("reset", "-q", "--hard", "HEAD~1") }},
		{name: "base_image_not_pinned_by_digest_is_refused", binary: "snatch-webhook", version: "v0.1.0", want: "is not pinned by digest",
			env:   []string{"DIGEST=sha256:" + strings.Repeat("0", 64)},
			setup: func() { commitUnpinnedBase(t, repo, "Dockerfile.webhook") },
			undo:  func() { git("reset", "-q", "--hard", "HEAD~1") }},
		{name: "signing_key_not_the_trusted_one_is_refused", binary: "snatch-webhook", version: "v0.1.0", want: "is not the committed cosign.pub",
			setup: func() { supplychain.CommitTrustedKey(t, repo, supplychain.ThrowawayKey(t)) },
			undo:  func() { git("reset", "-q", "--hard", "HEAD~1") }},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if tt.setup != nil {
				tt.setup()
				defer tt.undo()
			}
			res, err := r.release(t, tt.binary, tt.version, tt.env...)
			if err == nil || !strings.Contains(res.Stderr, tt.want) {
				t.Fatalf("release %s %s: %s\nwant a failure saying %q", tt.binary, tt.version, res, tt.want)
			}
			if _, err := os.Stat(filepath.Join(repo, "dist", tt.binary, tt.version)); err == nil {
				t.Errorf("a refused release wrote dist/%s/%s", tt.binary, tt.version)
			}
		})
	}
}

// cloneForRelease clones the repository at HEAD into a temporary directory,
// commits the public half of key as the trusted key, and gives each
// binary's Unreleased notes the version v0.1.0, as a release commit would.
// Uncommitted changes of the work tree are not part of it.
func cloneForRelease(t *testing.T, key string) string {
	t.Helper()
	repo := filepath.Join(t.TempDir(), "repo")
	process.Run(t, "git", "clone", "-q", tools.MustRepoRoot(t), repo)
	supplychain.CommitTrustedKey(t, repo, key)
	changelog := filepath.Join(repo, "CHANGELOG.md")
	b, err := os.ReadFile(changelog)
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, changelog, strings.ReplaceAll(string(b), "### Unreleased", "### v0.1.0"))
	supplychain.Git(t, repo, "commit", "-qam", "Release v0.1.0 of both")
	return repo
}

// commitUnpinnedBase commits dockerfile with its final stage's base pinned by
// tag alone.
func commitUnpinnedBase(t *testing.T, repo, dockerfile string) {
	t.Helper()
	path := filepath.Join(repo, dockerfile)
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	unpinned := regexp.MustCompile(`(?m)^(FROM gcr\.io/distroless/static:nonroot)@sha256:[0-9a-f]{64}$`).ReplaceAll(b, []byte("$1"))
	if bytes.Equal(unpinned, b) {
		t.Fatalf("%s has no base pinned by digest to unpin", dockerfile)
	}
	writeFile(t, path, string(unpinned))
	supplychain.Git(t, repo, "commit", "-qam", "unpinned base")
}

// changelogHeadings is a release's five headings, each followed by body.
func changelogHeadings(body string) string {
	var b strings.Builder
	for _, h := range []string{"Flags", "Metrics", "Alerts", "Manifests", "Required steps"} {
		fmt.Fprintf(&b, "#### %s\n\n%s\n", h, body)
	}
	return b.String()
}

// commitChangelogSection commits a section "### version" with text at the
// top of binary's section of CHANGELOG.md in repo.
func commitChangelogSection(t *testing.T, repo, binary, version, text string) {
	t.Helper()
	path := filepath.Join(repo, "CHANGELOG.md")
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	heading := "## " + binary + "\n"
	if !bytes.Contains(b, []byte(heading)) {
		t.Fatalf("CHANGELOG.md has no %q", heading)
	}
	writeFile(t, path, strings.Replace(string(b), heading, heading+"\n### "+version+"\n\n"+text+"\n", 1))
	supplychain.Git(t, repo, "commit", "-qam", "CHANGELOG "+version)
}

// hack/release/release.sh --check, which the release workflow runs before anything
// else, runs the release's checks alone: it passes a releasable commit and
// writes nothing, and refuses what a release refuses.
func TestReleaseCheckRunsTheChecksAlone(t *testing.T) {
	r := newReleaser(t)
	if _, err := r.script(t, "--check", "snatch-webhook", "v0.1.0"); err != nil {
		t.Fatalf("--check of a releasable commit: %v", err)
	}
	if _, err := os.Stat(filepath.Join(r.repo, "dist")); err == nil {
		t.Errorf("--check wrote dist/")
	}
	if res, err := r.script(t, "--check", "snatch-webhook", "v9.9.9"); err == nil || !strings.Contains(res.Stderr, "has no section '### v9.9.9'") {
		t.Errorf("--check of a version without notes: %s", res)
	}
}

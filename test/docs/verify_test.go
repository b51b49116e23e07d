package docs

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kyma-project/kim-snatch/test/framework"
	"github.com/kyma-project/kim-snatch/test/process"
	"github.com/kyma-project/kim-snatch/test/supplychain"
	"github.com/kyma-project/kim-snatch/test/tools"
)

// curlStub stands for curl in the documented commands. It serves each
// download of a GitHub release of the project from $RELEASES/<binary>/<version>/<file>,
// and each file of the repository at a release's tag, as
// raw.githubusercontent.com serves it, from the git repository $REPOSITORY
// at that tag; it fails on any other URL.
const curlStub = `#!/bin/sh
out= url=
while [ $# -gt 0 ]; do
	case $1 in
	-o) out=$2; shift 2 ;;
	-*) shift ;;
	*) url=$1; shift ;;
	esac
done
[ -n "$out" ] || { echo "curl stub: no -o for $url" >&2; exit 2; }
mkdir -p "$(dirname "$out")"
case $url in
https://github.com/kyma-project/kim-snatch/releases/download/*)
	cp "$RELEASES/${url#https://github.com/kyma-project/kim-snatch/releases/download/}" "$out" ;;
https://raw.githubusercontent.com/kyma-project/kim-snatch/refs/tags/*/*/*)
	rest=${url#https://raw.githubusercontent.com/kyma-project/kim-snatch/refs/tags/}
	binary=${rest%%/*} rest=${rest#*/}
	version=${rest%%/*} path=${rest#*/}
	git -C "$REPOSITORY" show "refs/tags/$binary/$version:$path" >"$out" ;;
*) echo "curl stub: unexpected call for $url" >&2; exit 22 ;;
esac
`

// The commands with which operators verify a release before they install
// it: the first code block under this heading of this document.
const (
	verificationDoc     = "deploy/README.md"
	verificationHeading = "## Verifying a release"
)

// fencedBlock returns the first fenced code block of text after the
// heading, whole.
func fencedBlock(t *testing.T, text, heading string) string {
	t.Helper()
	_, after, ok := strings.Cut(text, "\n"+heading+"\n")
	if !ok {
		t.Fatalf("no heading %q", heading)
	}
	_, after, ok = strings.Cut(after, "```sh\n")
	if !ok {
		t.Fatalf("no code block under %q", heading)
	}
	block, _, ok := strings.Cut(after, "```")
	if !ok {
		t.Fatalf("the code block under %q does not end", heading)
	}
	return block
}

// The commands with which verificationDoc has operators verify a release
// before they install it trust only the key of the repository at the
// release's tag. They pass on a release made and signed here, with its
// image signed in a registry on loopback, and fail once one byte of a
// downloaded file differs from what was signed, on a release whose every
// file, key and image an attacker replaced and signed with his own key,
// and on a release whose signed SHA256SUMS does not list install.yaml.
func TestDocumentedVerificationTrustsOnlyTheKeyAtTheTag(t *testing.T) {
	if testing.Short() {
		t.Skip("makes a release")
	}
	kubectl, err := framework.Kubectl()
	if err != nil {
		t.Fatal(err)
	}
	readme, err := os.ReadFile(filepath.Join(tools.MustRepoRoot(t), filepath.FromSlash(verificationDoc)))
	if err != nil {
		t.Fatal(err)
	}
	verify := documentedVerification(t, fencedBlock(t, string(readme), verificationHeading))
	rel := releaseInClone(t, kubectl)

	t.Run("the_release_passes", func(t *testing.T) {
		if _, err := verify(rel.copy(t), rel.repo); err != nil {
			t.Fatalf("the documented verification of a signed release fails: %v", err)
		}
	})
	t.Run("one_changed_byte_fails", func(t *testing.T) {
		dir := rel.copy(t)
		flipByte(t, filepath.Join(dir, releasePath, "install.yaml"))
		if r, err := verify(dir, rel.repo); err == nil {
			t.Errorf("the documented verification passes with one byte of install.yaml changed:\n%s", r)
		}
	})
	t.Run("a_forged_release_fails", func(t *testing.T) {
		dir := rel.copy(t)
		attacker := forgeRelease(t, filepath.Join(dir, releasePath), rel)
		// The forgery is whole: against a repository that held the
		// attacker's key it would pass, so only the key at the tag stops it.
		if _, err := verify(dir, repositoryWithKey(t, attacker)); err != nil {
			t.Fatalf("the forged release fails even with the attacker's key at the tag, so it proves nothing: %v", err)
		}
		if r, err := verify(dir, rel.repo); err == nil {
			t.Errorf("the documented verification passes a release whose every file an attacker replaced:\n%s", r)
		}
	})
	t.Run("sums_without_install_yaml_fail", func(t *testing.T) {
		dir := rel.copy(t)
		dropFromSums(t, filepath.Join(dir, releasePath), "install.yaml", rel.key)
		r, err := verify(dir, rel.repo)
		if err == nil {
			t.Errorf("the documented verification passes a SHA256SUMS that does not list install.yaml:\n%s", r)
		} else if !strings.Contains(r.Stderr, "no properly formatted checksum lines") {
			t.Errorf("the verification fails, but not where SHA256SUMS lacks install.yaml:\n%v", err)
		}
	})
}

// documentedVerification returns a function that runs block, as the
// document says, with bash -euo pipefail, cosign offline and curl served by
// curlStub from the releases below releases and the repository repository.
func documentedVerification(t *testing.T, block string) func(releases, repository string) (process.Result, error) {
	t.Helper()
	stubs := t.TempDir()
	if err := os.WriteFile(filepath.Join(stubs, "curl"), []byte(curlStub), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(tools.Cosign.Path(t), filepath.Join(stubs, "cosign")); err != nil {
		t.Fatal(err)
	}
	return func(releases, repository string) (process.Result, error) {
		env := append(supplychain.OfflineEnv(),
			"PATH="+stubs+string(os.PathListSeparator)+os.Getenv("PATH"),
			"RELEASES="+releases, "REPOSITORY="+repository,
			"WEBHOOK_VERSION=v0.1.0", "SYNCER_VERSION=v0.1.0")
		return process.Command{Dir: t.TempDir(), Env: env}.Run(t.Context(), "bash", "-euo", "pipefail", "-c", block)
	}
}

// releasePath is the release of the tests below the releases' root, as
// its tag names it.
const releasePath = "snatch-webhook/v0.1.0"

// release is a release made by hack/release/release.sh in a clone of the
// repository.
type release struct {
	repo     string // the clone, tagged snatch-webhook/v0.1.0
	key      string // the signing key, whose public half the clone committed
	registry string // the registry on loopback that holds its image
	digest   string // the image's digest
}

// copy returns a new root of releases holding a copy of the release.
func (r release) copy(t *testing.T) string {
	t.Helper()
	root := t.TempDir()
	if err := os.CopyFS(filepath.Join(root, releasePath), os.DirFS(filepath.Join(r.repo, "dist", releasePath))); err != nil {
		t.Fatal(err)
	}
	return root
}

// releaseInClone makes a release of snatch-webhook v0.1.0 from a clone, as
// the workflow makes it: the signing key's public half committed, the
// release commit tagged, the image pushed first, then make release with its
// digest.
func releaseInClone(t *testing.T, kubectl string) release {
	t.Helper()
	repo := filepath.Join(t.TempDir(), "repo")
	process.Run(t, "git", "clone", "-q", tools.MustRepoRoot(t), repo)
	key := supplychain.ThrowawayKey(t)
	supplychain.CommitTrustedKey(t, repo, key)
	changelog := filepath.Join(repo, "CHANGELOG.md")
	b, err := os.ReadFile(changelog)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(changelog, []byte(strings.ReplaceAll(string(b), "### Unreleased", "### v0.1.0")), 0o644); err != nil {
		t.Fatal(err)
	}
	supplychain.Git(t, repo, "commit", "-qam", "Release v0.1.0")
	supplychain.Git(t, repo, "tag", releasePath)
	registry := supplychain.StartRegistry(t) + "/kyma-project/prod"
	digest := supplychain.PushRandomImage(t, registry+"/snatch-webhook:v0.1.0")
	c := process.Command{Dir: repo, Env: append(supplychain.ReleaseEnv(t, key), "KUBECTL="+kubectl, "REGISTRY="+registry, "DIGEST="+digest, "RELEASE_TAG_AT_HEAD=1")}
	c.MustRun(t, "hack/release/release.sh", "snatch-webhook", "v0.1.0")
	return release{repo: repo, key: key, registry: registry, digest: digest}
}

package docs

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kyma-project/kim-snatch/test/framework"
	"github.com/kyma-project/kim-snatch/test/supplychain"
	"github.com/kyma-project/kim-snatch/test/tools"
)

// curlStub stands for curl in the documented commands: it serves each
// download of a GitHub release of the project from the release that the
// test made, $RELEASES/<binary>/<version>/<file>, and fails on any other URL.
const curlStub = `#!/bin/sh
out= url=
while [ $# -gt 0 ]; do
	case $1 in
	-o) out=$2; shift 2 ;;
	-*) shift ;;
	*) url=$1; shift ;;
	esac
done
path=${url#https://github.com/kyma-project/kim-snatch/releases/download/}
[ "$path" != "$url" ] && [ -n "$out" ] || { echo "curl stub: unexpected call for $url" >&2; exit 22; }
mkdir -p "$(dirname "$out")" && cp "$RELEASES/$path" "$out"
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
// before they install it pass on a release made and signed here, with its
// image signed in a registry on loopback, and fail once one byte of a
// downloaded file differs from what was signed.
func TestDocumentedVerificationPassesAReleaseAndFailsATamperedFile(t *testing.T) {
	if testing.Short() {
		t.Skip("makes a release")
	}
	kubectl, err := framework.Kubectl()
	if err != nil {
		t.Fatal(err)
	}
	readme, err := os.ReadFile(filepath.Join(repoRoot(t), filepath.FromSlash(verificationDoc)))
	if err != nil {
		t.Fatal(err)
	}
	block := fencedBlock(t, string(readme), verificationHeading)

	repo := releaseInClone(t, kubectl)
	stubs := t.TempDir()
	if err := os.WriteFile(filepath.Join(stubs, "curl"), []byte(curlStub), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(tools.Cosign.Path(t), filepath.Join(stubs, "cosign")); err != nil {
		t.Fatal(err)
	}
	verify := func() (string, error) {
		cmd := exec.Command("bash", "-euo", "pipefail", "-c", block)
		cmd.Dir = t.TempDir()
		cmd.Env = append(os.Environ(), append(supplychain.OfflineEnv(),
			"PATH="+stubs+string(os.PathListSeparator)+os.Getenv("PATH"),
			"RELEASES="+filepath.Join(repo, "dist"),
			"WEBHOOK_VERSION=v0.1.0", "SYNCER_VERSION=v0.1.0")...)
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	if out, err := verify(); err != nil {
		t.Fatalf("the documented verification of a signed release fails: %v\n%s", err, out)
	}

	installYAML := filepath.Join(repo, "dist", "snatch-webhook", "v0.1.0", "install.yaml")
	b, err := os.ReadFile(installYAML)
	if err != nil {
		t.Fatal(err)
	}
	b[len(b)/2] ^= 0x01
	if err := os.WriteFile(installYAML, b, 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := verify(); err == nil {
		t.Errorf("the documented verification passes with one byte of install.yaml changed:\n%s", out)
	}
}

// releaseInClone makes a release of snatch-webhook v0.1.0 from a clone, as
// the workflow makes it: the image pushed first, then make release with its
// digest. It returns the clone.
func releaseInClone(t *testing.T, kubectl string) string {
	t.Helper()
	repo := filepath.Join(t.TempDir(), "repo")
	run := func(dir string, env []string, name string, args ...string) {
		t.Helper()
		cmd := exec.Command(name, args...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), env...)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("%s %v: %v\n%s", name, args, err, out)
		}
	}
	run("", nil, "git", "clone", "-q", repoRoot(t), repo)
	changelog := filepath.Join(repo, "CHANGELOG.md")
	b, err := os.ReadFile(changelog)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(changelog, []byte(strings.ReplaceAll(string(b), "### Unreleased", "### v0.1.0")), 0o644); err != nil {
		t.Fatal(err)
	}
	run(repo, nil, "git", "-c", "user.email=release@test", "-c", "user.name=release test", "commit", "-qam", "Release v0.1.0")
	registry := supplychain.StartRegistry(t) + "/kyma-project/prod"
	digest := supplychain.PushRandomImage(t, registry+"/snatch-webhook:v0.1.0")
	key := supplychain.ThrowawayKey(t)
	run(repo, append(supplychain.ReleaseEnv(t, key), "KUBECTL="+kubectl, "REGISTRY="+registry, "DIGEST="+digest),
		"hack/release.sh", "snatch-webhook", "v0.1.0")
	return repo
}

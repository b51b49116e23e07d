package docs

import (
	"crypto/sha256"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/kyma-project/kim-snatch/test/supplychain"
)

// The releases that the documented verification must refuse: what one who
// can replace a release's files, but not the repository, can publish.

// forgeRelease replaces every file of the release in dir as an attacker
// would: his own image, pushed beside the real one and signed and attested
// with his own key; the manifests and SBOMs pinned to it; his public key as
// cosign.pub; SHA256SUMS written anew over every file and every signature
// made with his key. It returns his key.
func forgeRelease(t *testing.T, dir string, real release) string {
	t.Helper()
	key := supplychain.ThrowawayKey(t)
	digest := supplychain.PushRandomImage(t, real.registry+"/snatch-webhook:forged")
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		path := filepath.Join(dir, e.Name())
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		writeForged(t, path, strings.ReplaceAll(string(b), real.digest, digest))
	}
	pub, err := os.ReadFile(supplychain.PublicKey(key))
	if err != nil {
		t.Fatal(err)
	}
	writeForged(t, filepath.Join(dir, supplychain.TrustedKeyFile), string(pub))

	ref := real.registry + "/snatch-webhook@" + digest
	supplychain.MustCosign(t, dir, "sign", "--yes", "--key", key, "--tlog-upload=false", ref)
	supplychain.MustCosign(t, dir, "attest", "--yes", "--key", key, "--tlog-upload=false", "--type", "cyclonedx",
		"--predicate", "snatch-webhook-image-linux-amd64.cdx.json", ref)
	writeSums(t, dir)
	for _, e := range entries {
		if signed, ok := strings.CutSuffix(e.Name(), ".sigstore.json"); ok {
			supplychain.MustCosign(t, dir, "sign-blob", "--yes", "--key", key, "--tlog-upload=false", "--bundle", e.Name(), signed)
		}
	}
	return key
}

// dropFromSums removes file's line from the SHA256SUMS of the release in
// dir and signs the rest with key, the release's own: the signature holds,
// and only the missing line differs.
func dropFromSums(t *testing.T, dir, file, key string) {
	t.Helper()
	path := filepath.Join(dir, "SHA256SUMS")
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var kept []string
	for line := range strings.Lines(string(b)) {
		if _, name, _ := strings.Cut(strings.TrimSuffix(line, "\n"), "  "); name != file {
			kept = append(kept, line)
		}
	}
	if len(kept) == strings.Count(string(b), "\n") {
		t.Fatalf("SHA256SUMS does not list %s:\n%s", file, b)
	}
	writeForged(t, path, strings.Join(kept, ""))
	supplychain.MustCosign(t, dir, "sign-blob", "--yes", "--key", key, "--tlog-upload=false", "--bundle", "SHA256SUMS.sigstore.json", "SHA256SUMS")
	supplychain.MustCosign(t, dir, "verify-blob", "--key", supplychain.PublicKey(key), "--bundle", "SHA256SUMS.sigstore.json", "--insecure-ignore-tlog=true", "SHA256SUMS")
}

// repositoryWithKey returns a git repository whose tag of the release
// holds the public half of key as the trusted key.
func repositoryWithKey(t *testing.T, key string) string {
	t.Helper()
	repo := t.TempDir()
	supplychain.Git(t, repo, "init", "-q")
	supplychain.CommitTrustedKey(t, repo, key)
	supplychain.Git(t, repo, "tag", releasePath)
	return repo
}

// writeSums writes the SHA256SUMS of dir as hack/release/release.sh writes it: every
// file but the notes, the signatures and itself.
func writeSums(t *testing.T, dir string) {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var lines []string
	for _, e := range entries {
		name := e.Name()
		if name == "SHA256SUMS" || name == "RELEASE_NOTES.md" || strings.HasSuffix(name, ".sigstore.json") {
			continue
		}
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		lines = append(lines, fmt.Sprintf("%x  %s\n", sha256.Sum256(b), name))
	}
	slices.Sort(lines)
	writeForged(t, filepath.Join(dir, "SHA256SUMS"), strings.Join(lines, ""))
}

// flipByte changes one byte in the middle of the file at path.
func flipByte(t *testing.T, path string) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	b[len(b)/2] ^= 0x01
	writeForged(t, path, string(b))
}

func writeForged(t *testing.T, path, content string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

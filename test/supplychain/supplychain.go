package supplychain

import (
	"io"
	"log"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/registry"
	"github.com/google/go-containerregistry/pkg/v1/random"
	"github.com/google/go-containerregistry/pkg/v1/remote"

	"github.com/kyma-project/kim-snatch/test/process"
	"github.com/kyma-project/kim-snatch/test/tools"
)

// OfflineEnv keeps cosign on this machine: it asks the Sigstore TUF
// repository for a trusted root even when it verifies with a key, so every
// connection but those to loopback goes to a proxy on a closed loopback
// port and fails at once, and the registry on loopback is reached directly.
// The throwaway keys have no password.
func OfflineEnv() []string {
	return []string{"HTTPS_PROXY=http://127.0.0.1:1", "HTTP_PROXY=http://127.0.0.1:1", "NO_PROXY=127.0.0.1,localhost", "COSIGN_PASSWORD="}
}

// Cosign runs cosign offline in dir, through the kit's one runner of
// one-shot commands: the error names the command line and carries all
// cosign printed, and the result is filled in either way, for a test that
// expects cosign to refuse.
func Cosign(t testing.TB, dir string, args ...string) (process.Result, error) {
	t.Helper()
	return process.Command{Dir: dir, Env: OfflineEnv()}.Run(t.Context(), tools.Cosign.Path(t), args...)
}

// MustCosign runs cosign as Cosign does and returns its standard output;
// a cosign that fails fails t with all it printed.
func MustCosign(t testing.TB, dir string, args ...string) string {
	t.Helper()
	return process.Command{Dir: dir, Env: OfflineEnv()}.MustRun(t, tools.Cosign.Path(t), args...)
}

// Git runs git in repo as the committer of a release under test and
// returns its standard output; a git that fails fails t with all it
// printed.
func Git(t testing.TB, repo string, args ...string) string {
	t.Helper()
	return process.Command{Dir: repo}.MustRun(t, "git", append([]string{"-c", "user.email=release@test", "-c", "user.name=release test"}, args...)...)
}

// ThrowawayKey writes a cosign key pair without a password into a new
// directory and returns the private key's path; the public key is beside
// it as cosign.pub.
func ThrowawayKey(t testing.TB) string {
	t.Helper()
	dir := t.TempDir()
	MustCosign(t, dir, "generate-key-pair")
	return filepath.Join(dir, "cosign.key")
}

// ReleaseEnv is what make release passes to hack/release/release.sh besides
// KUBECTL: the tools and the key.
func ReleaseEnv(t testing.TB, key string) []string {
	t.Helper()
	return append([]string{
		"COSIGN=" + tools.Cosign.Path(t),
		"CYCLONEDX_GOMOD=" + tools.CycloneDXGomod.Path(t),
		"COSIGN_KEY=" + key,
	}, OfflineEnv()...)
}

// StartRegistry serves an in-memory registry on loopback until the test
// ends and returns its host:port.
func StartRegistry(t testing.TB) string {
	t.Helper()
	srv := httptest.NewServer(registry.New(registry.Logger(log.New(io.Discard, "", 0))))
	t.Cleanup(srv.Close)
	return srv.Listener.Addr().String()
}

// PushRandomImage pushes a small random image to ref and returns its
// digest.
func PushRandomImage(t testing.TB, ref string) string {
	t.Helper()
	img, err := random.Image(512, 1)
	if err != nil {
		t.Fatal(err)
	}
	r, err := name.ParseReference(ref, name.Insecure)
	if err != nil {
		t.Fatal(err)
	}
	if err := remote.Write(r, img); err != nil {
		t.Fatalf("push %s: %v", ref, err)
	}
	d, err := img.Digest()
	if err != nil {
		t.Fatal(err)
	}
	return d.String()
}

// TrustedKeyFile is the committed public key that operators verify every
// release with, read from the repository at the release's tag
// (docs/releasing.md, "Signing"); hack/release/release.sh refuses to sign with a
// key whose public half differs from it.
const TrustedKeyFile = "cosign.pub"

// PublicKey returns the path of the public half of a key that ThrowawayKey
// wrote.
func PublicKey(key string) string {
	return filepath.Join(filepath.Dir(key), "cosign.pub")
}

// CommitTrustedKey commits the public half of key as TrustedKeyFile in the
// git repository repo, as the project commits its own.
func CommitTrustedKey(t testing.TB, repo, key string) {
	t.Helper()
	b, err := os.ReadFile(PublicKey(key))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(repo, TrustedKeyFile), b, 0o644); err != nil {
		t.Fatal(err)
	}
	Git(t, repo, "add", TrustedKeyFile)
	Git(t, repo, "commit", "-qm", "The release signing key")
}

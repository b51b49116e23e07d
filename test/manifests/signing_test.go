package manifests

import (
	"debug/buildinfo"
	"encoding/json"
	"io"
	"log"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/registry"
	"github.com/google/go-containerregistry/pkg/v1/random"
	"github.com/google/go-containerregistry/pkg/v1/remote"
)

// The tools of the release, which the Makefile builds into bin/ and names
// in these variables.
const (
	CosignEnv         = "SNATCH_COSIGN"
	CycloneDXGomodEnv = "SNATCH_CYCLONEDX_GOMOD"
)

func toolFromEnv(t testing.TB, env string) string {
	t.Helper()
	p := os.Getenv(env)
	if p == "" {
		t.Fatalf("%s is not set; make test builds the tool into bin/ and sets it", env)
	}
	return p
}

// offlineEnv keeps cosign on this machine: it asks the Sigstore TUF
// repository for a trusted root even when it verifies with a key, so every
// connection but those to loopback goes to a proxy on a closed loopback
// port and fails at once; the in-process registry is reached directly.
func offlineEnv() []string {
	return []string{"HTTPS_PROXY=http://127.0.0.1:1", "HTTP_PROXY=http://127.0.0.1:1", "NO_PROXY=127.0.0.1,localhost", "COSIGN_PASSWORD="}
}

// cosign runs bin/cosign offline and returns its combined output.
func cosign(t testing.TB, dir string, args ...string) (string, error) {
	t.Helper()
	cmd := exec.Command(toolFromEnv(t, CosignEnv), args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), offlineEnv()...)
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// throwawayKey writes a cosign key pair without a password into a new
// directory and returns the private key's path.
func throwawayKey(t testing.TB) string {
	t.Helper()
	dir := t.TempDir()
	if out, err := cosign(t, dir, "generate-key-pair"); err != nil {
		t.Fatalf("cosign generate-key-pair: %v\n%s", err, out)
	}
	return filepath.Join(dir, "cosign.key")
}

// releaseEnv is what make release passes to hack/release.sh besides
// KUBECTL: the tools and a throwaway key.
func releaseEnv(t testing.TB, key string) []string {
	return append([]string{
		"COSIGN=" + toolFromEnv(t, CosignEnv),
		"CYCLONEDX_GOMOD=" + toolFromEnv(t, CycloneDXGomodEnv),
		"COSIGN_KEY=" + key,
	}, offlineEnv()...)
}

// startRegistry serves go-containerregistry's in-memory registry on
// loopback for the duration of the test and returns its host:port.
func startRegistry(t testing.TB) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: registry.New(registry.Logger(log.New(io.Discard, "", 0))), ReadHeaderTimeout: time.Minute}
	go func() { _ = srv.Serve(l) }()
	t.Cleanup(func() { _ = srv.Close() })
	return l.Addr().String()
}

// pushImage pushes a random image to ref and returns its digest.
func pushImage(t testing.TB, ref string) string {
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

// assertBlobSignatures verifies each file's bundle with the release's
// cosign.pub, offline, and checks that one changed byte fails it.
func assertBlobSignatures(t *testing.T, dir string, signed []string) {
	t.Helper()
	for _, f := range signed {
		bundle := f + ".sigstore.json"
		if out, err := cosign(t, dir, "verify-blob", "--key", "cosign.pub", "--bundle", bundle, "--insecure-ignore-tlog=true", f); err != nil {
			t.Errorf("cosign verify-blob %s: %v\n%s", f, err, out)
			continue
		}
		b, err := os.ReadFile(filepath.Join(dir, f))
		if err != nil {
			t.Fatal(err)
		}
		b[len(b)/2] ^= 0x01
		changed := filepath.Join(t.TempDir(), f)
		if err := os.WriteFile(changed, b, 0o644); err != nil {
			t.Fatal(err)
		}
		if out, err := cosign(t, dir, "verify-blob", "--key", "cosign.pub", "--bundle", bundle, "--insecure-ignore-tlog=true", changed); err == nil {
			t.Errorf("cosign verify-blob accepts %s with one byte changed:\n%s", f, out)
		}
	}
}

// cycloneDX is the part of a CycloneDX SBOM the release promises.
type cycloneDX struct {
	BOMFormat   string `json:"bomFormat"`
	SpecVersion string `json:"specVersion"`
	Metadata    struct {
		Component struct {
			Name    string `json:"name"`
			Version string `json:"version"`
		} `json:"component"`
	} `json:"metadata"`
	Components []struct {
		Name    string `json:"name"`
		Version string `json:"version"`
	} `json:"components"`
}

// assertSBOM holds a binary's SBOM to the binary's own build information,
// read with debug/buildinfo: the main module at the release's version, the
// toolchain as the component std, and every module linked in.
func assertSBOM(t *testing.T, binaryPath, version string) {
	t.Helper()
	b, err := os.ReadFile(binaryPath + ".cdx.json")
	if err != nil {
		t.Fatal(err)
	}
	var bom cycloneDX
	if err := json.Unmarshal(b, &bom); err != nil {
		t.Fatalf("%s.cdx.json: %v", filepath.Base(binaryPath), err)
	}
	info, err := buildinfo.ReadFile(binaryPath)
	if err != nil {
		t.Fatal(err)
	}
	if bom.BOMFormat != "CycloneDX" || bom.SpecVersion == "" {
		t.Errorf("%s.cdx.json: bomFormat %q, specVersion %q; want a CycloneDX document", filepath.Base(binaryPath), bom.BOMFormat, bom.SpecVersion)
	}
	if c := bom.Metadata.Component; c.Name != info.Main.Path || c.Version != version {
		t.Errorf("the SBOM describes %s %s, want %s %s", c.Name, c.Version, info.Main.Path, version)
	}
	var got []string
	for _, c := range bom.Components {
		got = append(got, c.Name+"@"+c.Version)
	}
	want := []string{"std@" + info.GoVersion}
	for _, d := range info.Deps {
		if d.Replace != nil {
			d = d.Replace
		}
		want = append(want, d.Path+"@"+d.Version)
	}
	for _, w := range want {
		if !slices.Contains(got, w) {
			t.Errorf("the SBOM of %s lacks %s, which the binary links", filepath.Base(binaryPath), w)
		}
	}
}

// assertImageSigned verifies the image's signature and its CycloneDX
// attestation by digest with the release's cosign.pub, and checks that
// another image of the same repository does not verify.
func assertImageSigned(t *testing.T, dir, image, digest, unsignedDigest string) {
	t.Helper()
	ref := image + "@" + digest
	if out, err := cosign(t, dir, "verify", "--key", "cosign.pub", "--insecure-ignore-tlog=true", ref); err != nil {
		t.Errorf("cosign verify %s: %v\n%s", ref, err, out)
	}
	out, err := cosign(t, dir, "verify-attestation", "--key", "cosign.pub", "--insecure-ignore-tlog=true", "--type", "cyclonedx", ref)
	if err != nil {
		t.Errorf("cosign verify-attestation %s: %v\n%s", ref, err, out)
	} else if !strings.Contains(out, "CycloneDX") && !strings.Contains(out, "cyclonedx") {
		t.Errorf("the attestation of %s holds no CycloneDX SBOM:\n%s", ref, out)
	}
	other := image + "@" + unsignedDigest
	if out, err := cosign(t, dir, "verify", "--key", "cosign.pub", "--insecure-ignore-tlog=true", other); err == nil {
		t.Errorf("cosign verify accepts %s, which the release did not sign:\n%s", other, out)
	}
}

// publicKey is the public half of the key pair that throwawayKey wrote.
func publicKey(t testing.TB, key string) string {
	t.Helper()
	return readFile(t, strings.TrimSuffix(key, ".key")+".pub")
}

func readFile(t testing.TB, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

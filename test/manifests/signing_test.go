package manifests

import (
	"debug/buildinfo"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/kyma-project/kim-snatch/test/supplychain"
)

// assertBlobSignatures verifies each file's bundle with the release's
// cosign.pub, offline, and checks that one changed byte fails it.
func assertBlobSignatures(t *testing.T, dir string, signed []string) {
	t.Helper()
	for _, f := range signed {
		bundle := f + ".sigstore.json"
		if out, err := supplychain.Cosign(t, dir, "verify-blob", "--key", "cosign.pub", "--bundle", bundle, "--insecure-ignore-tlog=true", f); err != nil {
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
		if out, err := supplychain.Cosign(t, dir, "verify-blob", "--key", "cosign.pub", "--bundle", bundle, "--insecure-ignore-tlog=true", changed); err == nil {
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
	if out, err := supplychain.Cosign(t, dir, "verify", "--key", "cosign.pub", "--insecure-ignore-tlog=true", ref); err != nil {
		t.Errorf("cosign verify %s: %v\n%s", ref, err, out)
	}
	out, err := supplychain.Cosign(t, dir, "verify-attestation", "--key", "cosign.pub", "--insecure-ignore-tlog=true", "--type", "cyclonedx", ref)
	if err != nil {
		t.Errorf("cosign verify-attestation %s: %v\n%s", ref, err, out)
	} else if boms := attestedSBOMs(t, out); len(boms) == 0 {
		t.Errorf("the attestations of %s hold no CycloneDX SBOM:\n%s", ref, out)
	}
	other := image + "@" + unsignedDigest
	if out, err := supplychain.Cosign(t, dir, "verify", "--key", "cosign.pub", "--insecure-ignore-tlog=true", other); err == nil {
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

// attestedSBOMs decodes the in-toto statements that cosign
// verify-attestation prints, one DSSE envelope a line, and returns the
// CycloneDX documents among their predicates.
func attestedSBOMs(t *testing.T, out string) []cycloneDX {
	t.Helper()
	var boms []cycloneDX
	for line := range strings.Lines(out) {
		var env struct {
			PayloadType string `json:"payloadType"`
			Payload     []byte `json:"payload"`
		}
		if json.Unmarshal([]byte(line), &env) != nil || env.PayloadType != "application/vnd.in-toto+json" {
			continue
		}
		var st struct {
			PredicateType string    `json:"predicateType"`
			Predicate     cycloneDX `json:"predicate"`
		}
		if err := json.Unmarshal(env.Payload, &st); err != nil {
			t.Errorf("an attestation's statement: %v", err)
			continue
		}
		if st.PredicateType == "https://cyclonedx.org/bom" && st.Predicate.BOMFormat == "CycloneDX" {
			boms = append(boms, st.Predicate)
		}
	}
	return boms
}

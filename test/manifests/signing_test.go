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

// assertBlobSignatures verifies each file's bundle with the public key
// pub, offline, and checks that one changed byte fails it.
func assertBlobSignatures(t *testing.T, dir, pub string, signed []string) {
	t.Helper()
	for _, f := range signed {
		bundle := f + ".sigstore.json"
		if _, err := supplychain.Cosign(t, dir, "verify-blob", "--key", pub, "--bundle", bundle, "--insecure-ignore-tlog=true", f); err != nil {
			t.Error(err)
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
		if r, err := supplychain.Cosign(t, dir, "verify-blob", "--key", pub, "--bundle", bundle, "--insecure-ignore-tlog=true", changed); err == nil {
			t.Errorf("cosign verify-blob accepts %s with one byte changed:\n%s", f, r)
		}
	}
}

// cycloneDX is the part of a CycloneDX SBOM the release promises.
type cycloneDX struct {
	BOMFormat   string `json:"bomFormat"`
	SpecVersion string `json:"specVersion"`
	Metadata    struct {
		Component cdxComponent `json:"component"`
	} `json:"metadata"`
	Components []cdxComponent `json:"components"`
}

type cdxComponent struct {
	Type    string `json:"type"`
	Name    string `json:"name"`
	Version string `json:"version"`
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
	assertLinkedModules(t, filepath.Base(binaryPath), bom, info)
}

// assertLinkedModules checks that bom lists the toolchain as the component
// std and every module the binary of info links.
func assertLinkedModules(t *testing.T, name string, bom cycloneDX, info *buildinfo.BuildInfo) {
	t.Helper()
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
			t.Errorf("the SBOM of %s lacks %s, which the binary links", name, w)
		}
	}
}

// imageSBOMs are the image's SBOMs that a release with DIGEST writes, one
// for each linux platform.
func imageSBOMs(binary string) []string {
	return []string{binary + "-image-linux-amd64.cdx.json", binary + "-image-linux-arm64.cdx.json"}
}

// assertImageSBOMs holds each image SBOM of the release in dir to the image
// that ships: the image ref (<image>@<digest>) as the described container,
// the base of the final stage of the binary's Dockerfile in repo, by
// digest, and the binary of that platform with every module it links.
func assertImageSBOMs(t *testing.T, repo, dir, binary, ref string) {
	t.Helper()
	stages := parseDockerfile(t, filepath.Join(repo, dockerfileOf(t, binary)))
	base := stages[len(stages)-1].from
	baseName, baseDigest, ok := strings.Cut(base, "@")
	if !ok {
		t.Fatalf("the base %s is not pinned by digest", base)
	}
	baseName, _, _ = strings.Cut(baseName, ":")
	image, digest, _ := strings.Cut(ref, "@")
	for _, f := range imageSBOMs(binary) {
		var bom cycloneDX
		if err := json.Unmarshal([]byte(readFile(t, filepath.Join(dir, f))), &bom); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		if c := bom.Metadata.Component; c != (cdxComponent{Type: "container", Name: image, Version: digest}) {
			t.Errorf("%s describes %+v, want the container %s", f, c, ref)
		}
		if !slices.Contains(bom.Components, cdxComponent{Type: "container", Name: baseName, Version: baseDigest}) {
			t.Errorf("%s does not hold the base image %s by its digest", f, base)
		}
		arch := strings.TrimSuffix(strings.TrimPrefix(f, binary+"-image-linux-"), ".cdx.json")
		info, err := buildinfo.ReadFile(filepath.Join(dir, binary+"-linux-"+arch))
		if err != nil {
			t.Fatal(err)
		}
		assertLinkedModules(t, f, bom, info)
	}
}

// dockerfileOf is the Dockerfile of binary.
func dockerfileOf(t *testing.T, binary string) string {
	t.Helper()
	for _, img := range images {
		if img.binary == binary {
			return img.dockerfile
		}
	}
	t.Fatalf("no image of %s", binary)
	return ""
}

// assertImageSigned verifies the image's signature and its CycloneDX
// attestations by digest with the public key pub, checks that they are the
// image's SBOMs, one for each linux platform, and that another image of the
// same repository does not verify.
func assertImageSigned(t *testing.T, dir, pub, image, digest, unsignedDigest string) {
	t.Helper()
	ref := image + "@" + digest
	if _, err := supplychain.Cosign(t, dir, "verify", "--key", pub, "--insecure-ignore-tlog=true", ref); err != nil {
		t.Error(err)
	}
	r, err := supplychain.Cosign(t, dir, "verify-attestation", "--key", pub, "--insecure-ignore-tlog=true", "--type", "cyclonedx", ref)
	if err != nil {
		t.Error(err)
	} else {
		var described int
		for _, bom := range attestedSBOMs(t, r.Stdout) {
			if c := bom.Metadata.Component; c.Type == "container" && c.Name == image && c.Version == digest {
				described++
			}
		}
		if described != 2 {
			t.Errorf("%d attested SBOMs describe the image %s, want one for each linux platform:\n%s", described, ref, r)
		}
	}
	other := image + "@" + unsignedDigest
	if r, err := supplychain.Cosign(t, dir, "verify", "--key", pub, "--insecure-ignore-tlog=true", other); err == nil {
		t.Errorf("cosign verify accepts %s, which the release did not sign:\n%s", other, r)
	}
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

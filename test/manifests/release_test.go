package manifests

import (
	"archive/tar"
	"bufio"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"debug/elf"
	"debug/macho"
	"encoding/hex"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"github.com/kyma-project/kim-snatch/test/framework"
	"github.com/kyma-project/kim-snatch/test/framework/objects"
	"github.com/kyma-project/kim-snatch/test/process"
	"github.com/kyma-project/kim-snatch/test/supplychain"
	"github.com/kyma-project/kim-snatch/test/tools"
)

// A tag is mutable unless it names a release: latest, main, the bases'
// placeholder, or no tag at all.
var releasedImage = regexp.MustCompile(`^([a-z0-9.-]+:[0-9]+/)?[a-z0-9./-]+(:v\d+\.\d+\.\d+[0-9A-Za-z.+-]*|@sha256:[0-9a-f]{64})$`)

// The bases reference no tag that could change under an installation; the
// one tag they carry is the placeholder that make release replaces.
func TestBasesReferenceNoMutableTag(t *testing.T) {
	for _, base := range []string{"deploy/webhook", "deploy/syncer", "deploy/default"} {
		for _, img := range imageRefs(render(t, base)) {
			name, tag, _ := strings.Cut(img, ":")
			if tag != "0.0.0-unreleased" || !strings.HasPrefix(name, "europe-docker.pkg.dev/kyma-project/prod/") {
				t.Errorf("%s: image %s, want a registry image with the placeholder tag 0.0.0-unreleased", base, img)
			}
		}
	}
}

// make release, run as the README says in a clone of the repository,
// writes the artefacts of one binary, pinned, checksummed, static and
// signed, and leaves the other binary's dist/ alone.
func TestReleaseWritesPinnedChecksummedSignedArtefacts(t *testing.T) {
	r := newReleaser(t)
	// The image of a release with DIGEST, as the workflow pushes it, and
	// another one that the release must not sign, in a registry on loopback.
	registry := supplychain.StartRegistry(t) + "/kyma-project/prod"
	digest := supplychain.PushRandomImage(t, registry+"/cabundle-syncer:v0.1.0")
	unsigned := supplychain.PushRandomImage(t, registry+"/cabundle-syncer:other")
	for _, tt := range []struct {
		binary, other string
		manifests     map[string]string // file -> the kustomization it renders
		env           []string
		wantRef       string
		image         string // the image the release signs, if any
	}{
		{binary: "snatch-webhook", other: "cabundle-syncer",
			manifests: map[string]string{"install.yaml": "deploy/webhook", "migration.yaml": migrationWebhook},
			wantRef:   "europe-docker.pkg.dev/kyma-project/prod/snatch-webhook:v0.1.0"},
		{binary: "cabundle-syncer", other: "snatch-webhook", manifests: map[string]string{"install.yaml": "deploy/syncer"},
			env:     []string{"DIGEST=" + digest, "REGISTRY=" + registry},
			wantRef: registry + "/cabundle-syncer@" + digest, image: registry + "/cabundle-syncer"},
	} {
		t.Run(tt.binary, func(t *testing.T) {
			otherBefore := treeHash(t, filepath.Join(r.repo, "dist", tt.other))
			res, err := r.release(t, tt.binary, "v0.1.0", tt.env...)
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(res.Stdout, "docker buildx build --platform linux/amd64,linux/arm64") || !strings.Contains(res.Stdout, "--push") {
				t.Errorf("the output does not give the multi-arch push command:\n%s", res)
			}
			dir := filepath.Join(r.repo, "dist", tt.binary, "v0.1.0")
			for file, base := range tt.manifests {
				assertPinnedManifest(t, filepath.Join(dir, file), filepath.Join(r.repo, base), tt.wantRef)
				assertRunbooksAtTag(t, r.repo, filepath.Join(dir, file), tt.binary+"/v0.1.0")
			}
			binaries := releaseBinaries(tt.binary)
			files := releaseFiles(tt.binary, binaries, slices.Collect(maps.Keys(tt.manifests)))
			if tt.image != "" {
				files = append(files, imageSBOMs(tt.binary)...)
			}
			sums := assertReleaseSums(t, dir, files)
			assertStaticLinuxBinaries(t, dir, tt.binary)
			assertDarwinBinaries(t, dir, tt.binary)
			if tt.binary == "cabundle-syncer" {
				assertKrewManifest(t, dir, "v0.1.0", sums)
			}
			assertReleaseNotes(t, r.repo, dir, tt.binary)
			// Each binary and SHA256SUMS, which covers every other file,
			// verify offline against the key the repository holds at the
			// release's commit, and each binary's SBOM lists what the binary
			// links. The release itself ships no key.
			trusted := filepath.Join(r.repo, supplychain.TrustedKeyFile)
			assertBlobSignatures(t, dir, trusted, append(binaries, "SHA256SUMS"))
			for _, b := range binaries {
				assertSBOM(t, filepath.Join(dir, b), "v0.1.0")
			}
			if tt.image != "" {
				assertImageSigned(t, dir, trusted, tt.image, digest, unsigned)
				assertImageSBOMs(t, r.repo, dir, tt.binary, tt.image+"@"+digest)
			}
			if _, err := os.Stat(filepath.Join(dir, supplychain.TrustedKeyFile)); err == nil {
				t.Errorf("the release ships %s: whoever replaces its files replaces that key too", supplychain.TrustedKeyFile)
			}
			if treeHash(t, filepath.Join(r.repo, "dist", tt.other)) != otherBefore {
				t.Errorf("releasing %s changed dist/%s", tt.binary, tt.other)
			}
		})
	}
}

// releaseBinaries are the binaries a release of binary writes: linux for
// both, darwin too for the kubectl plugin's cabundle-syncer.
func releaseBinaries(binary string) []string {
	binaries := []string{binary + "-linux-amd64", binary + "-linux-arm64"}
	if binary == "cabundle-syncer" {
		binaries = append(binaries, binary+"-darwin-amd64", binary+"-darwin-arm64")
	}
	return binaries
}

// releaseFiles are the files SHA256SUMS of a release of binary lists,
// without an image.
func releaseFiles(binary string, binaries, manifests []string) []string {
	var files []string
	for _, b := range binaries {
		files = append(files, b, b+".cdx.json")
	}
	files = append(files, manifests...)
	if binary == "cabundle-syncer" {
		files = append(files, "kim-snatch.yaml")
		for _, p := range krewPlatforms {
			files = append(files, "kubectl-kim_snatch-"+p+".tar.gz")
		}
	}
	return files
}

// assertReleaseSums checks that SHA256SUMS in dir lists exactly wantFiles,
// each with its true hash, and returns the sums by file.
func assertReleaseSums(t *testing.T, dir string, wantFiles []string) map[string]string {
	t.Helper()
	sums := readSums(t, filepath.Join(dir, "SHA256SUMS"))
	if got := slices.Sorted(maps.Keys(sums)); !slices.Equal(got, slices.Sorted(slices.Values(wantFiles))) {
		t.Errorf("SHA256SUMS lists %v, want %v", got, wantFiles)
	}
	for name, sum := range sums {
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		if h := sha256.Sum256(b); hex.EncodeToString(h[:]) != sum {
			t.Errorf("SHA256SUMS says %s for %s; the file hashes to %x", sum, name, h)
		}
	}
	return sums
}

// assertStaticLinuxBinaries checks that the linux binaries are for their
// architecture and ask for no dynamic loader.
func assertStaticLinuxBinaries(t *testing.T, dir, binary string) {
	t.Helper()
	for arch, machine := range map[string]elf.Machine{"amd64": elf.EM_X86_64, "arm64": elf.EM_AARCH64} {
		f, err := elf.Open(filepath.Join(dir, binary+"-linux-"+arch))
		if err != nil {
			t.Fatal(err)
		}
		if f.Machine != machine {
			t.Errorf("%s binary is for %v", arch, f.Machine)
		}
		for _, p := range f.Progs {
			if p.Type == elf.PT_INTERP {
				t.Errorf("%s binary asks for a dynamic loader: it is not static", arch)
			}
		}
		_ = f.Close()
	}
}

// assertDarwinBinaries checks that only a release of cabundle-syncer writes
// darwin binaries, each for its architecture.
func assertDarwinBinaries(t *testing.T, dir, binary string) {
	t.Helper()
	for arch, cpu := range map[string]macho.Cpu{"amd64": macho.CpuAmd64, "arm64": macho.CpuArm64} {
		f, err := macho.Open(filepath.Join(dir, binary+"-darwin-"+arch))
		if binary != "cabundle-syncer" {
			if err == nil {
				t.Errorf("a release of %s writes a darwin binary", binary)
				_ = f.Close()
			}
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		if f.Cpu != cpu {
			t.Errorf("darwin %s binary is for %v", arch, f.Cpu)
		}
		_ = f.Close()
	}
}

// assertReleaseNotes checks that RELEASE_NOTES.md has the title and the
// CHANGELOG section of the release.
func assertReleaseNotes(t *testing.T, repo, dir, binary string) {
	t.Helper()
	notes, err := os.ReadFile(filepath.Join(dir, "RELEASE_NOTES.md"))
	if err != nil {
		t.Fatal(err)
	}
	section := changelogSection(t, filepath.Join(repo, "CHANGELOG.md"), binary, "v0.1.0")
	if !strings.Contains(string(notes), section) || !strings.HasPrefix(string(notes), "# "+binary+" v0.1.0") {
		t.Errorf("RELEASE_NOTES.md:\n%s\nwant the title and the CHANGELOG section:\n%s", notes, section)
	}
}

// assertPinnedManifest holds a manifest of a release to the kustomization
// base it renders: the same objects, every image wantRef.
func assertPinnedManifest(t *testing.T, path, base, wantRef string) {
	t.Helper()
	objs := readObjects(t, path)
	file := filepath.Base(path)
	if got := imageRefs(objs); len(got) == 0 || slices.ContainsFunc(got, func(img string) bool { return img != wantRef }) {
		t.Errorf("%s images %v, want only %s", file, got, wantRef)
	}
	for _, img := range imageRefs(objs) {
		if !releasedImage.MatchString(img) {
			t.Errorf("%s references %s, which is not pinned to a release", file, img)
		}
	}
	want, err := kustomize(base)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := objectIDs(objs), objectIDs(want); !slices.Equal(got, want) {
		t.Errorf("%s has objects %v, want those of %s: %v", file, got, base, want)
	}
}

// changelogSection reads the lines under "### version" of "## binary", with
// its own parser.
func changelogSection(t *testing.T, path, binary, version string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var lines []string
	inBinary, in := false, false
	for line := range strings.Lines(string(b)) {
		line = strings.TrimRight(line, "\n")
		switch {
		case strings.HasPrefix(line, "## "):
			inBinary, in = line == "## "+binary, false
		case strings.HasPrefix(line, "### "):
			in = inBinary && line == "### "+version
		case in:
			lines = append(lines, line)
		}
	}
	section := strings.TrimSpace(strings.Join(lines, "\n"))
	if section == "" {
		t.Fatalf("CHANGELOG.md has no text under ### %s of ## %s", version, binary)
	}
	return section
}

func imageRefs(objs []*unstructured.Unstructured) []string {
	var out []string
	for _, o := range objs {
		for _, path := range [][]string{{"spec", "template", "spec"}, {"spec", "jobTemplate", "spec", "template", "spec"}} {
			spec, ok, _ := unstructured.NestedMap(o.Object, path...)
			if !ok {
				continue
			}
			for _, field := range []string{"containers", "initContainers"} {
				cs, _, _ := unstructured.NestedSlice(spec, field)
				for _, c := range cs {
					if img, ok := c.(map[string]any)["image"].(string); ok {
						out = append(out, img)
					}
				}
			}
		}
	}
	return out
}

func objectIDs(objs []*unstructured.Unstructured) []string {
	var out []string
	for _, o := range objs {
		out = append(out, fmt.Sprintf("%s/%s/%s", o.GetKind(), o.GetNamespace(), o.GetName()))
	}
	slices.Sort(out)
	return out
}

func readSums(t *testing.T, path string) map[string]string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close() //nolint:errcheck // read-only
	sums := map[string]string{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		sum, name, ok := strings.Cut(sc.Text(), "  ")
		if !ok {
			t.Fatalf("SHA256SUMS line %q is not '<sum>  <file>'", sc.Text())
		}
		sums[name] = sum
	}
	return sums
}

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// treeHash hashes the names, modes and contents of the files below dir; ""
// when dir does not exist.
func treeHash(t *testing.T, dir string) string {
	t.Helper()
	if _, err := os.Stat(dir); os.IsNotExist(err) {
		return ""
	}
	h := sha256.New()
	err := filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		fmt.Fprintf(h, "%s %v %x\n", path, info.ModTime(), sha256.Sum256(b))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return hex.EncodeToString(h.Sum(nil))
}

// The overlay example of deploy/README.md renders over the release files
// it lists, pins each binary to a release, and changes what it says it
// changes.
func TestOverlayExamplePinsReleasesAndChangesWhatItSays(t *testing.T) {
	objs := renderExampleOverlay(t, "")
	refs := imageRefs(objs)
	if distinct := slices.Compact(slices.Sorted(slices.Values(refs))); len(distinct) != 2 {
		t.Fatalf("images %v, want the two binaries'", distinct)
	}
	for _, img := range refs {
		if !releasedImage.MatchString(img) {
			t.Errorf("the overlay references %s, which is not pinned to a release", img)
		}
	}
	for _, d := range objects.OfKind(objs, "Deployment") {
		replicas, _, _ := unstructured.NestedFieldNoCopy(d.Object, "spec", "replicas")
		if want := map[string]float64{"snatch-webhook": 3, "cabundle-syncer": 2}[d.GetName()]; replicas != want {
			t.Errorf("Deployment %s has %v replicas, want %v", d.GetName(), replicas, want)
		}
	}
	for _, kind := range []string{"ServiceMonitor", "PrometheusRule"} {
		for _, o := range objects.OfKind(objs, kind) {
			if got := o.GetLabels()["prometheus"]; got != "platform" {
				t.Errorf("%s %s has prometheus=%q, want the overlay's platform", kind, o.GetName(), got)
			}
		}
	}
}

// krewPlatforms are the os-arch pairs the kubectl plugin ships for.
var krewPlatforms = []string{"linux-amd64", "linux-arm64", "darwin-amd64", "darwin-arm64"}

// assertKrewManifest holds kim-snatch.yaml to krew's Plugin kind: the
// version, one platform per os/arch whose uri names its archive in the
// GitHub release of the tag and whose sha256 is the archive's, and each
// archive holding the binary of its platform as kubectl-kim_snatch.
func assertKrewManifest(t *testing.T, dir, version string, sums map[string]string) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, "kim-snatch.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var plugin struct {
		APIVersion string `json:"apiVersion"`
		Kind       string `json:"kind"`
		Metadata   struct{ Name string }
		Spec       struct {
			Version, Homepage, ShortDescription, Description, Caveats string
			Platforms                                                 []struct {
				Selector struct {
					MatchLabels map[string]string `json:"matchLabels"`
				}
				URI, Sha256, Bin string
			}
		}
	}
	if err := yaml.UnmarshalStrict(b, &plugin); err != nil {
		t.Fatalf("kim-snatch.yaml: %v\n%s", err, b)
	}
	if plugin.APIVersion != "krew.googlecontainertools.github.com/v1alpha2" || plugin.Kind != "Plugin" ||
		plugin.Metadata.Name != "kim-snatch" || plugin.Spec.Version != version || plugin.Spec.ShortDescription == "" {
		t.Errorf("kim-snatch.yaml is not the Plugin kim-snatch %s:\n%s", version, b)
	}
	var got []string
	for _, p := range plugin.Spec.Platforms {
		platform := p.Selector.MatchLabels["os"] + "-" + p.Selector.MatchLabels["arch"]
		got = append(got, platform)
		archive := "kubectl-kim_snatch-" + platform + ".tar.gz"
		if want := "https://github.com/kyma-project/kim-snatch/releases/download/cabundle-syncer/" + version + "/" + archive; p.URI != want {
			t.Errorf("%s: uri %s, want %s", platform, p.URI, want)
		}
		if p.Sha256 != sums[archive] || p.Bin != "kubectl-kim_snatch" {
			t.Errorf("%s: sha256 %s, bin %s; want the archive's %s and kubectl-kim_snatch", platform, p.Sha256, p.Bin, sums[archive])
		}
		binary, err := os.ReadFile(filepath.Join(dir, "cabundle-syncer-"+platform))
		if err != nil {
			t.Fatal(err)
		}
		if files := archiveFiles(t, filepath.Join(dir, archive)); !bytes.Equal(files["kubectl-kim_snatch"], binary) || len(files) != 1 {
			t.Errorf("%s holds %v, want only kubectl-kim_snatch, the cabundle-syncer binary of %s", archive, slices.Sorted(maps.Keys(files)), platform)
		}
	}
	if !slices.Equal(slices.Sorted(slices.Values(got)), slices.Sorted(slices.Values(krewPlatforms))) {
		t.Errorf("platforms %v, want %v", got, krewPlatforms)
	}
}

// archiveFiles returns the regular files of a .tar.gz by their names.
func archiveFiles(t *testing.T, path string) map[string][]byte {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close() //nolint:errcheck // read-only
	gz, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	files := map[string][]byte{}
	tr := tar.NewReader(gz)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return files
		}
		if err != nil {
			t.Fatal(err)
		}
		if h.Typeflag == tar.TypeReg {
			b, err := io.ReadAll(tr)
			if err != nil {
				t.Fatal(err)
			}
			files[filepath.Clean(h.Name)] = b
		}
	}
}

// With the component its comment names, the overlay swaps Gardener's
// Issuer and Certificate for cert-manager's and changes nothing else.
func TestOverlayExampleWithCertManagerSwapsOnlyTheCertificates(t *testing.T) {
	plain := ids(renderExampleOverlay(t, ""))
	objs := ids(renderExampleOverlay(t, "components:\n  - ../../components/cert-manager\n"))
	want := slices.DeleteFunc(slices.Clone(plain), func(s string) bool { return slices.Contains(gardenerCertificate, s) })
	want = slices.Sorted(slices.Values(append(want, certManagerCertificate...)))
	if !slices.Equal(objs, want) {
		t.Errorf("the overlay with components/cert-manager renders\n  %v\nwant\n  %v", objs, want)
	}
}

// exampleOverlay is the overlay of deploy/README.md, "Changing the
// installation".
const exampleOverlay = "deploy/examples/overlay"

// renderExampleOverlay renders a copy of exampleOverlay, with extra added
// to its kustomization, in a copy of deploy/, and with the release files
// it lists as hack/release/release.sh --manifests renders them.
func renderExampleOverlay(t *testing.T, extra string) []*unstructured.Unstructured {
	t.Helper()
	root := tools.MustRepoRoot(t)
	kubectl, err := framework.Kubectl()
	if err != nil {
		t.Fatal(err)
	}
	tmp := t.TempDir()
	if err := os.CopyFS(filepath.Join(tmp, "deploy"), os.DirFS(filepath.Join(root, "deploy"))); err != nil {
		t.Fatal(err)
	}
	overlay := filepath.Join(tmp, filepath.FromSlash(exampleOverlay))
	data, err := os.ReadFile(filepath.Join(overlay, "kustomization.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var k struct{ Resources []string }
	if err := yaml.Unmarshal(data, &k); err != nil {
		t.Fatal(err)
	}
	for _, r := range k.Resources {
		m := releaseFile.FindStringSubmatch(r)
		if m == nil {
			t.Fatalf("%s lists %s, which is not a release file dist/<binary>/<version>/<file>", exampleOverlay, r)
		}
		out := filepath.Join(t.TempDir(), "release")
		process.Command{Env: []string{"KUBECTL=" + kubectl}}.MustRun(t, filepath.Join(root, "hack", "release", "release.sh"), "--manifests", out, m[1], m[2])
		b, err := os.ReadFile(filepath.Join(out, m[3]))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.MkdirAll(filepath.Dir(filepath.Join(overlay, r)), 0o755); err != nil {
			t.Fatal(err)
		}
		writeFile(t, filepath.Join(overlay, r), string(b))
	}
	writeFile(t, filepath.Join(overlay, "kustomization.yaml"), string(data)+"\n"+extra)
	rel, err := filepath.Rel(root, overlay)
	if err != nil {
		t.Fatal(err)
	}
	return render(t, rel)
}

// releaseFile is a file of a release as an overlay lists it.
var releaseFile = regexp.MustCompile(`^dist/(snatch-webhook|cabundle-syncer)/([^/]+)/([^/]+)$`)

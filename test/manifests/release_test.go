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
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"github.com/kyma-project/kim-snatch/test/framework"
	"github.com/kyma-project/kim-snatch/test/supplychain"
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

// make release, run as the README says in a clone of the repository: the
// artefacts of one binary, pinned, checksummed and static; the refusals.
func TestRelease(t *testing.T) {
	if testing.Short() {
		t.Skip("builds four static binaries")
	}
	kubectl, err := framework.Kubectl()
	if err != nil {
		t.Fatal(err)
	}
	repo := cloneForRelease(t)
	key := supplychain.ThrowawayKey(t)
	release := func(binary, version string, env ...string) (string, error) {
		cmd := exec.Command("hack/release.sh", binary, version)
		cmd.Dir = repo
		cmd.Env = append(os.Environ(), append(append([]string{"KUBECTL=" + kubectl}, supplychain.ReleaseEnv(t, key)...), env...)...)
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	git := func(args ...string) {
		t.Helper()
		cmd := exec.Command("git", append([]string{"-c", "user.email=release@test", "-c", "user.name=release test"}, args...)...)
		cmd.Dir = repo
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}

	t.Run("refuses", func(t *testing.T) {
		for _, tt := range []struct {
			name, binary, version, want string
			setup, undo                 func()
		}{
			{name: "not_semver", binary: "snatch-webhook", version: "1.0", want: "is not semver"},
			{name: "leading_zero", binary: "snatch-webhook", version: "v0.01.0", want: "is not semver"},
			{name: "unknown_binary", binary: "operator", version: "v0.1.0", want: "unknown binary"},
			{name: "no_changelog_section", binary: "snatch-webhook", version: "v9.9.9", want: "has no section '### v9.9.9'"},
			{name: "changelog_section_only_headings", binary: "snatch-webhook", version: "v0.0.9", want: "is empty",
				setup: func() { commitChangelogSection(t, repo, "snatch-webhook", "v0.0.9", changelogHeadings("")) },
				undo:  func() { git("reset", "-q", "--hard", "HEAD~1") }},
			{name: "changelog_section_without_a_heading", binary: "cabundle-syncer", version: "v0.0.9", want: "no heading '#### Alerts'",
				setup: func() {
					commitChangelogSection(t, repo, "cabundle-syncer", "v0.0.9", strings.Replace(changelogHeadings("none"), "#### Alerts\n", "", 1))
				},
				undo: func() { git("reset", "-q", "--hard", "HEAD~1") }},
			{name: "dirty_tree", binary: "snatch-webhook", version: "v0.1.0", want: "not clean",
				setup: func() { writeFile(t, filepath.Join(repo, "stray.txt"), "x") },
				undo:  func() { _ = os.Remove(filepath.Join(repo, "stray.txt")) }},
			{name: "already_tagged", binary: "cabundle-syncer", version: "v0.1.0", want: "already tagged",
				setup: func() { git("tag", "cabundle-syncer/v0.1.0") },
				undo:  func() { git("tag", "-d", "cabundle-syncer/v0.1.0") }},
		} {
			t.Run(tt.name, func(t *testing.T) {
				if tt.setup != nil {
					tt.setup()
					defer tt.undo()
				}
				out, err := release(tt.binary, tt.version)
				if err == nil || !strings.Contains(out, tt.want) {
					t.Fatalf("release %s %s: err %v, output %q; want a failure saying %q", tt.binary, tt.version, err, out, tt.want)
				}
				if _, err := os.Stat(filepath.Join(repo, "dist", tt.binary, tt.version)); err == nil {
					t.Errorf("a refused release wrote dist/%s/%s", tt.binary, tt.version)
				}
			})
		}
	})

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
			otherBefore := treeHash(t, filepath.Join(repo, "dist", tt.other))
			out, err := release(tt.binary, "v0.1.0", tt.env...)
			if err != nil {
				t.Fatalf("release: %v\n%s", err, out)
			}
			if !strings.Contains(out, "docker buildx build --platform linux/amd64,linux/arm64") || !strings.Contains(out, "--push") {
				t.Errorf("the output does not give the multi-arch push command:\n%s", out)
			}
			dir := filepath.Join(repo, "dist", tt.binary, "v0.1.0")
			for file, base := range tt.manifests {
				assertPinnedManifest(t, filepath.Join(dir, file), filepath.Join(repo, base), tt.wantRef)
				assertRunbooksAtTag(t, repo, filepath.Join(dir, file), tt.binary+"/v0.1.0")
			}

			sums := readSums(t, filepath.Join(dir, "SHA256SUMS"))
			binaries := []string{tt.binary + "-linux-amd64", tt.binary + "-linux-arm64"}
			if tt.binary == "cabundle-syncer" {
				binaries = append(binaries, tt.binary+"-darwin-amd64", tt.binary+"-darwin-arm64")
			}
			wantFiles := []string{"cosign.pub"}
			for _, b := range binaries {
				wantFiles = append(wantFiles, b, b+".cdx.json")
			}
			for file := range tt.manifests {
				wantFiles = append(wantFiles, file)
			}
			if tt.binary == "cabundle-syncer" {
				wantFiles = append(wantFiles, "kim-snatch.yaml")
				for _, p := range krewPlatforms {
					wantFiles = append(wantFiles, "kubectl-kim_snatch-"+p+".tar.gz")
				}
			}
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
			for arch, machine := range map[string]elf.Machine{"amd64": elf.EM_X86_64, "arm64": elf.EM_AARCH64} {
				f, err := elf.Open(filepath.Join(dir, tt.binary+"-linux-"+arch))
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

			for arch, cpu := range map[string]macho.Cpu{"amd64": macho.CpuAmd64, "arm64": macho.CpuArm64} {
				f, err := macho.Open(filepath.Join(dir, tt.binary+"-darwin-"+arch))
				if tt.binary != "cabundle-syncer" {
					if err == nil {
						t.Errorf("a release of %s writes a darwin binary", tt.binary)
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
			if tt.binary == "cabundle-syncer" {
				assertKrewManifest(t, dir, "v0.1.0", sums)
			}

			notes, err := os.ReadFile(filepath.Join(dir, "RELEASE_NOTES.md"))
			if err != nil {
				t.Fatal(err)
			}
			section := changelogSection(t, filepath.Join(repo, "CHANGELOG.md"), tt.binary, "v0.1.0")
			if !strings.Contains(string(notes), section) || !strings.HasPrefix(string(notes), "# "+tt.binary+" v0.1.0") {
				t.Errorf("RELEASE_NOTES.md:\n%s\nwant the title and the CHANGELOG section:\n%s", notes, section)
			}
			// Each binary and SHA256SUMS, which covers every other file,
			// verify against the release's key offline, and each binary's
			// SBOM lists what the binary links.
			assertBlobSignatures(t, dir, append(binaries, "SHA256SUMS"))
			for _, b := range binaries {
				assertSBOM(t, filepath.Join(dir, b), "v0.1.0")
			}
			if tt.image != "" {
				assertImageSigned(t, dir, tt.image, digest, unsigned)
			}
			if got, want := readFile(t, filepath.Join(dir, "cosign.pub")), publicKey(t, key); got != want {
				t.Errorf("the release's cosign.pub is not the signing key's public half:\n%s\nwant:\n%s", got, want)
			}
			if treeHash(t, filepath.Join(repo, "dist", tt.other)) != otherBefore {
				t.Errorf("releasing %s changed dist/%s", tt.binary, tt.other)
			}
		})
	}
}

// assertPinnedManifest holds a manifest of a release to the kustomization
// base it renders: the same objects, every image wantRef.
func assertPinnedManifest(t *testing.T, path, base, wantRef string) {
	t.Helper()
	manifest, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	objs, err := decodeYAML(manifest)
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Base(path)
	if got := imageRefs(objs); len(got) == 0 || slices.ContainsFunc(got, func(img string) bool { return img != wantRef }) {
		t.Errorf("%s images %v, want only %s", file, got, wantRef)
	}
	for _, img := range imageRefs(objs) {
		if !releasedImage.MatchString(img) {
			t.Errorf("%s references %s, which is not pinned to a release", file, img)
		}
	}
	kubectl, err := framework.Kubectl()
	if err != nil {
		t.Fatal(err)
	}
	rendered, err := exec.Command(kubectl, "kustomize", base).Output()
	if err != nil {
		t.Fatal(err)
	}
	want, err := decodeYAML(rendered)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := objectIDs(objs), objectIDs(want); !slices.Equal(got, want) {
		t.Errorf("%s has objects %v, want those of %s: %v", file, got, base, want)
	}
}

// cloneForRelease clones the repository at HEAD into a temporary directory
// and gives each binary's Unreleased notes the version v0.1.0, as a release
// commit would. Uncommitted changes of the work tree are not part of it.
func cloneForRelease(t *testing.T) string {
	t.Helper()
	repo := filepath.Join(t.TempDir(), "repo")
	if out, err := exec.Command("git", "clone", "-q", repoRoot(t), repo).CombinedOutput(); err != nil {
		t.Fatalf("git clone: %v\n%s", err, out)
	}
	changelog := filepath.Join(repo, "CHANGELOG.md")
	b, err := os.ReadFile(changelog)
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, changelog, strings.ReplaceAll(string(b), "### Unreleased", "### v0.1.0"))
	cmd := exec.Command("git", "-c", "user.email=release@test", "-c", "user.name=release test", "commit", "-qam", "Release v0.1.0 of both")
	cmd.Dir = repo
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("git commit: %v\n%s", err, out)
	}
	return repo
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
func TestOverlayExample(t *testing.T) {
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
	for _, d := range ofKind(objs, "Deployment") {
		replicas, _, _ := unstructured.NestedFieldNoCopy(d.Object, "spec", "replicas")
		if want := map[string]float64{"snatch-webhook": 3, "cabundle-syncer": 2}[d.GetName()]; replicas != want {
			t.Errorf("Deployment %s has %v replicas, want %v", d.GetName(), replicas, want)
		}
	}
	for _, kind := range []string{"ServiceMonitor", "PrometheusRule"} {
		for _, o := range ofKind(objs, kind) {
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
	cmd := exec.Command("git", "-c", "user.email=release@test", "-c", "user.name=release test", "commit", "-qam", "CHANGELOG "+version)
	cmd.Dir = repo
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("git commit: %v\n%s", err, out)
	}
}

// With the component its comment names, the overlay swaps Gardener's
// Issuer and Certificate for cert-manager's and changes nothing else.
func TestOverlayExampleWithCertManager(t *testing.T) {
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
// it lists as hack/release.sh --manifests renders them.
func renderExampleOverlay(t *testing.T, extra string) []*unstructured.Unstructured {
	t.Helper()
	root := repoRoot(t)
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
		cmd := exec.Command(filepath.Join(root, "hack", "release.sh"), "--manifests", out, m[1], m[2])
		cmd.Env = append(os.Environ(), "KUBECTL="+kubectl)
		if b, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("hack/release.sh --manifests %s %s: %v\n%s", m[1], m[2], err, b)
		}
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

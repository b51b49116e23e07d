package manifests

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"encoding/json"
	"io"
	"maps"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/kyma-project/kim-snatch/test/process"
	"github.com/kyma-project/kim-snatch/test/tools"
)

// imageTag is the tag `make images` gives, the one test/e2e/kind/overlay
// deploys.
const imageTag = "e2e"

// imageArchive is a docker archive read back: the config of its one image
// and the files of each layer, in order.
type imageArchive struct {
	repoTags []string
	config   struct {
		Architecture string `json:"architecture"`
		OS           string `json:"os"`
		Config       struct {
			User       string
			Entrypoint []string
			Cmd        []string
			Labels     map[string]string
		} `json:"config"`
	}
	layers [][]layerFile
}

type layerFile struct {
	hdr  *tar.Header
	data []byte
}

// readImageArchive reads a `docker save` archive with the standard library:
// manifest.json, the config it names, and the layers, gzipped or not.
func readImageArchive(t *testing.T, file string) imageArchive {
	t.Helper()
	raw, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	entries, err := readTar(bytes.NewReader(raw))
	if err != nil {
		t.Fatalf("%s: %v", file, err)
	}
	var manifest []struct {
		Config   string
		RepoTags []string
		Layers   []string
	}
	if err := json.Unmarshal(entries["manifest.json"], &manifest); err != nil || len(manifest) != 1 {
		t.Fatalf("%s: manifest.json %s (%v), want one image", file, entries["manifest.json"], err)
	}
	var img imageArchive
	img.repoTags = manifest[0].RepoTags
	if err := json.Unmarshal(entries[path.Clean(manifest[0].Config)], &img.config); err != nil {
		t.Fatalf("%s: config %s: %v", file, manifest[0].Config, err)
	}
	for _, l := range manifest[0].Layers {
		blob, ok := entries[path.Clean(l)]
		if !ok {
			t.Fatalf("%s: layer %s is missing", file, l)
		}
		files, err := readLayer(blob)
		if err != nil {
			t.Fatalf("%s: layer %s: %v", file, l, err)
		}
		img.layers = append(img.layers, files)
	}
	return img
}

// readTar returns the contents of a tar stream's entries by cleaned name.
func readTar(r io.Reader) (map[string][]byte, error) {
	files, err := tarFiles(r)
	if err != nil {
		return nil, err
	}
	entries := map[string][]byte{}
	for _, f := range files {
		entries[path.Clean(f.hdr.Name)] = f.data
	}
	return entries, nil
}

// readLayer returns the files of a layer blob, gzipped or not, in order.
func readLayer(blob []byte) ([]layerFile, error) {
	var r io.Reader = bytes.NewReader(blob)
	if bytes.HasPrefix(blob, []byte{0x1f, 0x8b}) {
		var err error
		if r, err = gzip.NewReader(r); err != nil {
			return nil, err
		}
	}
	return tarFiles(r)
}

// tarFiles returns the entries of a tar stream in order.
func tarFiles(r io.Reader) ([]layerFile, error) {
	var files []layerFile
	tr := tar.NewReader(r)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return files, nil
		}
		if err != nil {
			return nil, err
		}
		data, err := io.ReadAll(tr)
		if err != nil {
			return nil, err
		}
		files = append(files, layerFile{hdr: h, data: data})
	}
}

// imagesDir returns the folder with the archives of `make images`, or skips
// (fails under CI) when they are not there.
func imagesDir(t *testing.T) string {
	t.Helper()
	dir := tools.Images.Path(t)
	for _, img := range images {
		if _, err := os.Stat(filepath.Join(dir, img.binary+".tar")); err != nil {
			if tools.InCI() {
				t.Fatalf("no image archive in %s (%v): run `%s` before the tests", dir, err, tools.Images.Target)
			}
			t.Skipf("no image archive in %s: run `%s` (or set %s) to check the images", dir, tools.Images.Target, tools.Images.Env)
		}
	}
	return dir
}

var dockerfileLabel = regexp.MustCompile(`([A-Za-z0-9._/-]+)=("((?:[^"\\]|\\.)*)"|\S+)`)

// dockerfileLabels reads the LABEL instructions of a stage, with ${NAME}
// and $NAME replaced from args as docker build does.
func dockerfileLabels(t *testing.T, s stage, args map[string]string) map[string]string {
	t.Helper()
	ref := regexp.MustCompile(`\$\{?([A-Za-z_][A-Za-z0-9_]*)\}?`)
	labels := map[string]string{}
	for _, l := range s.all("LABEL") {
		ms := dockerfileLabel.FindAllStringSubmatch(l, -1)
		if len(ms) == 0 {
			t.Fatalf("LABEL %s: no key=value", l)
		}
		for _, m := range ms {
			v := m[2]
			if strings.HasPrefix(v, `"`) {
				v = regexp.MustCompile(`\\(.)`).ReplaceAllString(m[3], "$1")
			}
			labels[m[1]] = ref.ReplaceAllStringFunc(v, func(r string) string {
				return args[ref.FindStringSubmatch(r)[1]]
			})
		}
	}
	return labels
}

// The images of `make images` are their Dockerfiles' final stages without
// the base: the same user, entrypoint, labels and binary path, and the
// binary that hack/build/build-binary.sh builds, byte for byte. The layer holds
// nothing of the distroless base, so nothing may rely on one.
func TestImageArchivesMatchDockerfiles(t *testing.T) {
	dir := imagesDir(t)
	root := tools.MustRepoRoot(t)
	for _, img := range images {
		t.Run(img.name, func(t *testing.T) {
			stages := parseDockerfile(t, filepath.Join(root, img.dockerfile))
			final := stages[len(stages)-1]
			got := readImageArchive(t, filepath.Join(dir, img.binary+".tar"))
			if want := []string{img.binary + ":" + imageTag}; !slices.Equal(got.repoTags, want) {
				t.Errorf("RepoTags %q, want %q, the names test/e2e/kind/overlay deploys", got.repoTags, want)
			}
			checkArchiveConfig(t, got, final)
			dest := copyDestination(t, final)
			binary := archiveBinary(t, got, dest)
			if got.config.Architecture != runtime.GOARCH || runtime.GOOS != "linux" {
				t.Skipf("a %s image; the rest runs its binary on linux/%s", got.config.Architecture, runtime.GOARCH)
			}
			checkArchiveBinary(t, img.binary, dest, binary, final, got.config.Config.Labels)
		})
	}
}

// checkArchiveConfig checks the image config against the final stage: os,
// user, entrypoint and no command.
func checkArchiveConfig(t *testing.T, got imageArchive, final stage) {
	t.Helper()
	if got.config.OS != "linux" {
		t.Errorf("os %q, want linux", got.config.OS)
	}
	cfg := got.config.Config
	users := final.all("USER")
	if len(users) != 1 || cfg.User != users[0] {
		t.Errorf("user %q, the Dockerfile says USER %q", cfg.User, users)
	}
	var entrypoint []string
	if eps := final.all("ENTRYPOINT"); len(eps) != 1 || json.Unmarshal([]byte(eps[0]), &entrypoint) != nil {
		t.Fatalf("ENTRYPOINT %q, want one in exec form", eps)
	}
	if !slices.Equal(cfg.Entrypoint, entrypoint) {
		t.Errorf("entrypoint %q, the Dockerfile says %q", cfg.Entrypoint, entrypoint)
	}
	if len(cfg.Cmd) > 0 || len(final.all("CMD")) > 0 {
		t.Errorf("cmd %q, Dockerfile CMD %q; want neither", cfg.Cmd, final.all("CMD"))
	}
}

// copyDestination returns the path, without its leading slash, that the
// final stage's one COPY writes.
func copyDestination(t *testing.T, final stage) string {
	t.Helper()
	copies := final.all("COPY")
	if len(copies) != 1 {
		t.Fatalf("COPY %q, want one", copies)
	}
	fields := strings.Fields(copies[0])
	return strings.TrimPrefix(path.Clean(fields[len(fields)-1]), "/")
}

// archiveBinary returns the executable at dest in the image's one layer,
// which holds nothing of the distroless base: no /etc/passwd, no CA bundle.
func archiveBinary(t *testing.T, got imageArchive, dest string) []byte {
	t.Helper()
	if len(got.layers) != 1 {
		t.Fatalf("%d layers, want 1", len(got.layers))
	}
	var binary []byte
	for _, f := range got.layers[0] {
		name := path.Clean(f.hdr.Name)
		switch {
		case name == dest:
			if f.hdr.Typeflag != tar.TypeReg || f.hdr.Mode&0o111 == 0 {
				t.Errorf("/%s: type %c mode %o, want an executable file", dest, f.hdr.Typeflag, f.hdr.Mode)
			}
			binary = f.data
		case name == "etc/passwd":
			t.Errorf("the layer has /etc/passwd; the image is documented to have none")
		case strings.HasPrefix(name, "etc/ssl/") || strings.HasPrefix(name, "etc/pki/") ||
			strings.HasSuffix(name, ".crt") || strings.HasSuffix(name, ".pem"):
			t.Errorf("the layer has /%s; the image is documented to have no CA bundle", name)
		}
	}
	if binary == nil {
		t.Fatalf("the layer has no /%s, the COPY destination", dest)
	}
	return binary
}

// checkArchiveBinary runs the image's binary: it says which VERSION and
// REVISION it was built with, the labels are the Dockerfile's with that
// VERSION, and, unless -short, the build script builds the same bytes.
func checkArchiveBinary(t *testing.T, name, dest string, binary []byte, final stage, labels map[string]string) {
	t.Helper()
	exe := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(exe, binary, 0o755); err != nil {
		t.Fatal(err)
	}
	r, err := process.Command{}.Run(t.Context(), exe, "--version")
	f := strings.Fields(r.Stdout)
	if err != nil || len(f) < 2 || f[0] != name {
		t.Fatalf("/%s --version: %v, %q", dest, err, r.Stdout)
	}
	version, revision := f[1], strings.TrimSuffix(f[len(f)-1], ")")
	if want := dockerfileLabels(t, final, map[string]string{"VERSION": version}); !maps.Equal(labels, want) {
		t.Errorf("labels %q,\nthe Dockerfile's with VERSION=%s are %q", labels, version, want)
	}
	if testing.Short() {
		return
	}
	built, err := os.ReadFile(buildBinary(t, name, version, revision))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(binary, built) {
		t.Errorf("/%s (%d bytes) differs from what %s builds with VERSION=%s REVISION=%s (%d bytes)", dest, len(binary), buildScript, version, revision, len(built))
	}
}

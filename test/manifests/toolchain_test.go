package manifests

import (
	"debug/buildinfo"
	"encoding/json"
	"go/version"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/kyma-project/kim-snatch/test/process"
	"github.com/kyma-project/kim-snatch/test/tools"
)

// goMod is what the go command itself reads from go.mod.
type goMod struct {
	Go        string
	Toolchain string
}

func readGoMod(t *testing.T) goMod {
	t.Helper()
	out := process.Command{Dir: tools.MustRepoRoot(t)}.MustRun(t, "go", "mod", "edit", "-json")
	var m goMod
	if err := json.Unmarshal([]byte(out), &m); err != nil {
		t.Fatal(err)
	}
	return m
}

// pinnedToolchain is go.mod's toolchain line, the one place that names the
// toolchain of the builds, the images and the releases.
func pinnedToolchain(t *testing.T) string {
	t.Helper()
	m := readGoMod(t)
	if !version.IsValid(m.Toolchain) || version.Lang(m.Toolchain) == m.Toolchain {
		t.Fatalf("go.mod's toolchain is %q, want a released toolchain such as go1.26.10", m.Toolchain)
	}
	return m.Toolchain
}

// The builder image: a Go release pinned by version and digest.
var builderImage = regexp.MustCompile(`^golang:(\d+\.\d+\.\d+)@sha256:[0-9a-f]{64}$`)

// Both Dockerfiles start their build from one image, pinned so that it
// cannot move under a commit, with a Go that can read go.mod, on the
// toolchain's release line; the toolchain itself is go.mod's
// (TestBinariesAreBuiltWithThePinnedToolchain).
func TestDockerfilesPinTheBuilderImage(t *testing.T) {
	root := tools.MustRepoRoot(t)
	m := readGoMod(t)
	froms := map[string]string{}
	for _, img := range images {
		stages := parseDockerfile(t, filepath.Join(root, img.dockerfile))
		from := stages[0].from
		froms[img.dockerfile] = from
		sm := builderImage.FindStringSubmatch(from)
		if sm == nil {
			t.Errorf("%s: builder FROM %s, want golang:<version>@sha256:<digest>", img.dockerfile, from)
			continue
		}
		v := "go" + sm[1]
		if version.Compare(v, "go"+m.Go) < 0 {
			t.Errorf("%s: the builder image has %s, older than go.mod's go %s: it cannot read go.mod", img.dockerfile, v, m.Go)
		}
		// The image moves with the toolchain: on its release line, and
		// never past it, where its own Go would be the newer one.
		if version.Lang(v) != version.Lang(m.Toolchain) || version.Compare(v, m.Toolchain) > 0 {
			t.Errorf("%s: the builder image has %s, want a release of %s no newer than go.mod's toolchain %s", img.dockerfile, v, version.Lang(m.Toolchain), m.Toolchain)
		}
	}
	if froms["Dockerfile.webhook"] != froms["Dockerfile.syncer"] {
		t.Errorf("the Dockerfiles build on different images: %q", froms)
	}
}

// Every go command of the Makefile runs go.mod's toolchain, also where the
// environment, like Go's own go.env, says GOTOOLCHAIN=local.
func TestMakefileRunsThePinnedToolchain(t *testing.T) {
	want := pinnedToolchain(t)
	out := process.Command{Dir: tools.MustRepoRoot(t), Env: []string{"GOTOOLCHAIN=local"}}.MustRun(t,
		"make", "--no-print-directory", "--eval", "print-toolchain: ; @go env GOVERSION", "print-toolchain")
	if got := strings.TrimSpace(out); got != want {
		t.Errorf("the Makefile's go commands run %s, go.mod names %s", got, want)
	}
}

// The binaries, built as the images build them (under the builder image's
// GOTOOLCHAIN=local) and as make build and make release build them, carry
// go.mod's toolchain: its standard library is the one govulncheck checks.
func TestBinariesAreBuiltWithThePinnedToolchain(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a binary")
	}
	want := pinnedToolchain(t)
	root := tools.MustRepoRoot(t)
	out := t.TempDir()
	process.Command{Dir: root, Env: []string{"GOTOOLCHAIN=local"}}.MustRun(t, "sh", buildScript, "snatch-webhook", out)
	info, err := buildinfo.ReadFile(filepath.Join(out, "snatch-webhook"))
	if err != nil {
		t.Fatal(err)
	}
	if info.GoVersion != want {
		t.Errorf("the binary was built with %s, go.mod names %s", info.GoVersion, want)
	}
}

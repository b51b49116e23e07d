package manifests

import (
	"bufio"
	"bytes"
	"context"
	"debug/elf"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/kyma-project/kim-snatch/test/process"
	"github.com/kyma-project/kim-snatch/test/tools"
)

// The images, each with its Dockerfile, binary and Deployment.
var images = []struct {
	name       string
	dockerfile string
	binary     string
	dir        string
}{
	{name: "snatch_webhook", dockerfile: "Dockerfile.webhook", binary: "snatch-webhook", dir: webhookBase},
	{name: "cabundle_syncer", dockerfile: "Dockerfile.syncer", binary: "cabundle-syncer", dir: syncerBase},
}

// buildScript is the one place that holds the build flags; both
// Dockerfiles call it and the tests below run it.
const buildScript = "hack/build/build-binary.sh"

// instruction is one Dockerfile instruction with continuations joined.
type instruction struct {
	cmd  string // upper case
	args string
}

// stage is one FROM and the instructions after it.
type stage struct {
	from, name string
	instrs     []instruction
}

// parseDockerfile reads the instructions of a Dockerfile: comments dropped,
// backslash continuations joined, grouped by stage.
func parseDockerfile(t testing.TB, path string) []stage {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var stages []stage
	var line strings.Builder
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		text := strings.TrimSpace(sc.Text())
		if text == "" || strings.HasPrefix(text, "#") {
			continue
		}
		if cont, ok := strings.CutSuffix(text, "\\"); ok {
			line.WriteString(cont + " ")
			continue
		}
		line.WriteString(text)
		cmd, args, _ := strings.Cut(line.String(), " ")
		line.Reset()
		in := instruction{cmd: strings.ToUpper(cmd), args: strings.Join(strings.Fields(args), " ")}
		if in.cmd == "FROM" {
			var s stage
			fields := slices.DeleteFunc(strings.Fields(in.args), func(f string) bool { return strings.HasPrefix(f, "--") })
			s.from = fields[0]
			if len(fields) == 3 && strings.EqualFold(fields[1], "AS") {
				s.name = fields[2]
			}
			stages = append(stages, s)
			continue
		}
		if len(stages) == 0 {
			if in.cmd != "ARG" {
				t.Fatalf("%s: %s before the first FROM", path, in.cmd)
			}
			continue
		}
		stages[len(stages)-1].instrs = append(stages[len(stages)-1].instrs, in)
	}
	return stages
}

func (s stage) all(cmd string) []string {
	var out []string
	for _, in := range s.instrs {
		if in.cmd == cmd {
			out = append(out, in.args)
		}
	}
	return out
}

var distrolessStaticNonroot = regexp.MustCompile(`^gcr\.io/distroless/static(-debian\d+)?:nonroot(@sha256:[0-9a-f]{64})?$`)

// Each Dockerfile builds with the shared build script and ships its binary
// alone on distroless static, as the numeric non-root user its Deployment
// runs as.
func TestDockerfilesBuildWithTheScriptOntoDistrolessNonroot(t *testing.T) {
	root := tools.MustRepoRoot(t)
	for _, img := range images {
		t.Run(img.name, func(t *testing.T) {
			stages := parseDockerfile(t, filepath.Join(root, img.dockerfile))
			if len(stages) < 2 {
				t.Fatalf("%d stages, want a builder and the final image", len(stages))
			}
			builder, final := stages[0], stages[len(stages)-1]
			checkBuilderRunsBuildScript(t, builder, final, img.binary)
			checkFinalStageIsDistroless(t, final, img.binary)
			uid := checkNonrootUser(t, final)
			pod := deployment(t, render(t, img.dir), img.binary).Spec.Template.Spec
			if got := deref(pod.SecurityContext.RunAsUser); got != uid {
				t.Errorf("the Deployment runs as uid %d, the image as %d", got, uid)
			}
		})
	}
}

// checkBuilderRunsBuildScript checks that the builder runs the shared build
// script for binary with the VERSION and REVISION build arguments, and that
// the final stage copies only its output.
func checkBuilderRunsBuildScript(t *testing.T, builder, final stage, binary string) {
	t.Helper()
	for _, arg := range []string{"VERSION", "REVISION"} {
		if !slices.ContainsFunc(builder.all("ARG"), func(a string) bool { return a == arg || strings.HasPrefix(a, arg+"=") }) {
			t.Errorf("the builder has no ARG %s", arg)
		}
	}
	if !slices.ContainsFunc(builder.all("RUN"), func(run string) bool { return strings.Contains(run, "REVISION=${REVISION} ") }) {
		t.Errorf("no RUN in the builder passes REVISION=${REVISION} to %s", buildScript)
	}
	re := regexp.MustCompile(`(^|\s)VERSION=\$\{?VERSION\}?\s.*\b(sh\s+)?` + regexp.QuoteMeta(buildScript) + `\s+` + regexp.QuoteMeta(binary) + `\s+(\S+)$`)
	var outDir string
	for _, run := range builder.all("RUN") {
		if m := re.FindStringSubmatch(run); m != nil {
			outDir = m[3]
		}
		if strings.Contains(run, "go build") {
			t.Errorf("RUN %q calls go build itself; the flags belong in %s", run, buildScript)
		}
	}
	if outDir == "" {
		t.Fatalf("no RUN in the builder calls `VERSION=${VERSION} %s %s <dir>`; RUNs: %q", buildScript, binary, builder.all("RUN"))
	}
	wantCopy := fmt.Sprintf("--from=%s %s/%s /%s", builder.name, outDir, binary, binary)
	if copies := final.all("COPY"); !slices.Equal(copies, []string{wantCopy}) {
		t.Errorf("the final stage copies %q, want only %q", copies, wantCopy)
	}
}

// checkFinalStageIsDistroless checks that the final stage is distroless
// static, non-root, with no shell: nothing may need one.
func checkFinalStageIsDistroless(t *testing.T, final stage, binary string) {
	t.Helper()
	if !distrolessStaticNonroot.MatchString(final.from) {
		t.Errorf("final FROM %s, want gcr.io/distroless/static:nonroot", final.from)
	}
	if runs := final.all("RUN"); len(runs) > 0 {
		t.Errorf("the final stage has RUN %q, but its base has no shell", runs)
	}
	var entrypoint []string
	eps := final.all("ENTRYPOINT")
	if len(eps) != 1 || json.Unmarshal([]byte(eps[0]), &entrypoint) != nil || !slices.Equal(entrypoint, []string{"/" + binary}) {
		t.Errorf("ENTRYPOINT %q, want the exec form [\"/%s\"]: there is no shell", eps, binary)
	}
	if cmds := final.all("CMD"); len(cmds) > 0 {
		t.Errorf("CMD %q; the Deployment passes the arguments", cmds)
	}
}

// checkNonrootUser returns the final stage's one numeric non-root uid, so
// the kubelet can verify runAsNonRoot.
func checkNonrootUser(t *testing.T, final stage) int64 {
	t.Helper()
	users := final.all("USER")
	if len(users) != 1 {
		t.Fatalf("USER %q, want one numeric non-root USER", users)
	}
	uid, _, _ := strings.Cut(users[0], ":")
	n, err := strconv.ParseInt(uid, 10, 64)
	if err != nil || n == 0 {
		t.Fatalf("USER %s, want a numeric non-root uid, so the kubelet can verify runAsNonRoot", users[0])
	}
	return n
}

// buildBinary runs the build script as the Dockerfile does and returns the
// binary. CGO_ENABLED=1 in the environment shows that the script, not the
// caller, decides.
func buildBinary(t *testing.T, binary, version, revision string) string {
	t.Helper()
	out, err := process.Build(context.Background(), binary, t.TempDir(),
		"VERSION="+version, "REVISION="+revision, "GOOS=linux", "GOARCH="+runtime.GOARCH, "CGO_ENABLED=1")
	if err != nil {
		t.Fatalf("%s %s: %v", buildScript, binary, err)
	}
	return out
}

// The binary the image ships is static, stripped, free of build paths, and
// reports the version it was built with. It also accepts every argument its
// Deployment passes.
func TestImageBinariesAreStaticStrippedAndAcceptTheirArguments(t *testing.T) {
	if testing.Short() {
		t.Skip("builds both binaries")
	}
	if runtime.GOOS != "linux" {
		t.Skip("runs the linux binaries it builds")
	}
	root := tools.MustRepoRoot(t)
	for _, img := range images {
		t.Run(img.name, func(t *testing.T) {
			const version, revision = "v0.0.0-manifests.test", "0123abc"
			bin := buildBinary(t, img.binary, version, revision)

			f, err := elf.Open(bin)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			for _, p := range f.Progs {
				if p.Type == elf.PT_INTERP || p.Type == elf.PT_DYNAMIC {
					t.Errorf("program header %s: the binary is dynamically linked", p.Type)
				}
			}
			for _, s := range []string{".interp", ".dynamic", ".dynsym"} {
				if f.Section(s) != nil {
					t.Errorf("section %s: the binary is dynamically linked", s)
				}
			}
			if libs, _ := f.ImportedLibraries(); len(libs) > 0 {
				t.Errorf("the binary needs %v", libs)
			}
			for _, s := range []string{".symtab", ".debug_info", ".zdebug_info"} {
				if f.Section(s) != nil {
					t.Errorf("section %s: the binary is not stripped (-s -w)", s)
				}
			}
			data, err := os.ReadFile(bin)
			if err != nil {
				t.Fatal(err)
			}
			if bytes.Contains(data, []byte(root)) {
				t.Errorf("the binary contains the build path %s; -trimpath is missing", root)
			}

			r, err := process.Command{}.Run(t.Context(), bin, "--version")
			if err != nil || r.Stderr != "" || !strings.HasPrefix(r.Stdout, img.binary+" "+version+" ") || !strings.HasSuffix(r.Stdout, ", revision "+revision+")\n") {
				t.Errorf("%s --version: %v, %q, want it to report %s %s and the revision %s and nothing else", img.binary, err, r, img.binary, version, revision)
			}

			// The Deployment's arguments parse; --version then exits
			// before anything starts. $(VAR) is expanded as the kubelet does.
			c := container(t, deployment(t, render(t, img.dir), img.binary))
			args := append(expandArgs(t, c), "--version")
			if _, err := (process.Command{}).Run(t.Context(), bin, args...); err != nil {
				t.Error(err)
			}
		})
	}
}

// expandArgs expands $(VAR) in the container's arguments from its env, with
// the downward API's metadata.namespace as the rendered namespace.
func expandArgs(t *testing.T, c corev1.Container) []string {
	t.Helper()
	env := map[string]string{}
	for _, e := range c.Env {
		switch {
		case e.ValueFrom == nil:
			env[e.Name] = e.Value
		case e.ValueFrom.FieldRef != nil && e.ValueFrom.FieldRef.FieldPath == "metadata.namespace":
			env[e.Name] = namespace
		}
	}
	ref := regexp.MustCompile(`\$\(([A-Za-z_][A-Za-z0-9_]*)\)`)
	var out []string
	for _, a := range c.Args {
		out = append(out, ref.ReplaceAllStringFunc(a, func(m string) string {
			name := ref.FindStringSubmatch(m)[1]
			v, ok := env[name]
			if !ok {
				t.Errorf("argument %q refers to $(%s), which the container's env does not define", a, name)
			}
			return v
		}))
	}
	return out
}

func TestBuildScriptRejectsBadInput(t *testing.T) {
	root := tools.MustRepoRoot(t)
	tests := []struct {
		name    string
		args    []string
		version string
	}{
		{name: "unknown_binary_is_a_usage_error", args: []string{"kubectl", t.TempDir()}, version: "v1"},
		{name: "no_binary_is_a_usage_error", version: "v1"},
		{name: "version_with_a_space_is_a_usage_error", args: []string{"snatch-webhook", t.TempDir()}, version: "v1 -X evil=1"},
		{name: "version_with_a_quote_is_a_usage_error", args: []string{"snatch-webhook", t.TempDir()}, version: `v1"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, err := process.Command{Dir: root, Env: []string{"VERSION=" + tt.version}}.Run(t.Context(), "sh", append([]string{buildScript}, tt.args...)...)
			if r.Code != 2 {
				t.Fatalf("exit %v, want usage error 2\n%s", err, r)
			}
		})
	}
}

// hack/build/docker-build.sh, with a fake docker that records its calls.
func TestDockerBuildScriptBuildsBothImagesOrSaysWhyNot(t *testing.T) {
	root := tools.MustRepoRoot(t)
	dirname, err := exec.LookPath("dirname")
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name       string
		engine     bool // whether `docker info` succeeds
		noCLI      bool
		args       []string
		wantExit   int
		wantStderr string
		wantBuilds []string
	}{
		{name: "no_docker_engine_fails_saying_so", wantExit: 1, wantStderr: "no Docker engine is reachable"},
		{name: "no_docker_cli_fails_saying_so", noCLI: true, wantExit: 1, wantStderr: "docker CLI is not installed"},
		{name: "no_argument_builds_both_images", engine: true, wantBuilds: []string{
			"build -f Dockerfile.webhook --build-arg VERSION=v1.2.3 --build-arg REVISION=0123abc -t snatch-webhook:v1.2.3 .",
			"build -f Dockerfile.syncer --build-arg VERSION=v1.2.3 --build-arg REVISION=0123abc -t cabundle-syncer:v1.2.3 .",
		}},
		{name: "syncer_argument_builds_the_syncer_alone", engine: true, args: []string{"syncer"}, wantBuilds: []string{
			"build -f Dockerfile.syncer --build-arg VERSION=v1.2.3 --build-arg REVISION=0123abc -t cabundle-syncer:v1.2.3 .",
		}},
		{name: "unknown_image_is_a_usage_error", engine: true, args: []string{"operator"}, wantExit: 2, wantStderr: "unknown image"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			bin := t.TempDir()
			calls := filepath.Join(t.TempDir(), "calls")
			infoExit := 1
			if tt.engine {
				infoExit = 0
			}
			fake := fmt.Sprintf("#!/bin/sh\n[ \"$1\" = info ] && exit %d\n[ \"$PWD\" = %q ] || { echo \"docker run outside the repository: $PWD\" >&2; exit 3; }\necho \"$*\" >> %q\n", infoExit, root, calls)
			if !tt.noCLI {
				if err := os.WriteFile(filepath.Join(bin, "docker"), []byte(fake), 0o755); err != nil {
					t.Fatal(err)
				}
			}
			if err := os.Symlink(dirname, filepath.Join(bin, "dirname")); err != nil {
				t.Fatal(err)
			}
			sh, err := exec.LookPath("sh")
			if err != nil {
				t.Fatal(err)
			}
			// env -i: the script sees this environment and nothing of the
			// test's, which a Command adds to.
			r, err := process.Command{Dir: t.TempDir()}.Run(t.Context(), "env", append([]string{"-i", "PATH=" + bin, "VERSION=v1.2.3", "REVISION=0123abc",
				sh, filepath.Join(root, "hack", "build", "docker-build.sh")}, tt.args...)...)
			if r.Code < 0 {
				t.Fatal(err)
			}
			if r.Code != tt.wantExit || !strings.Contains(r.Stderr, tt.wantStderr) {
				t.Fatalf("exit %d, stderr %q; want exit %d and %q", r.Code, r.Stderr, tt.wantExit, tt.wantStderr)
			}
			data, err := os.ReadFile(calls)
			if err != nil && !errors.Is(err, os.ErrNotExist) {
				t.Fatal(err)
			}
			var builds []string
			for _, l := range strings.Split(strings.TrimSpace(string(data)), "\n") {
				if l != "" {
					builds = append(builds, l)
				}
			}
			if !slices.Equal(builds, tt.wantBuilds) {
				t.Fatalf("docker was called with %q, want %q", builds, tt.wantBuilds)
			}
		})
	}
}

// dockerignored reports whether .dockerignore keeps path (relative to the
// repository root, slash-separated) out of the build context. It knows the
// pattern forms .dockerignore uses: `*`, `**/<glob>`, paths, and `!` to
// re-include; the last matching pattern wins.
func dockerignored(patterns []string, path string) bool {
	ignored := false
	for _, p := range patterns {
		neg := strings.HasPrefix(p, "!")
		p = strings.TrimSuffix(strings.TrimPrefix(p, "!"), "/")
		var match bool
		switch {
		case p == "*":
			match = true
		case strings.HasPrefix(p, "**/"):
			for _, elem := range strings.Split(path, "/") {
				if ok, _ := filepath.Match(p[3:], elem); ok {
					match = true
				}
			}
		default:
			ok, _ := filepath.Match(p, path)
			match = ok || path == p || strings.HasPrefix(path, p+"/")
		}
		if match {
			ignored = !neg
		}
	}
	return ignored
}

// Every file the binaries are built from is in the image build context, and
// the rest of the repository is not.
func TestDockerignoreKeepsEveryBuildInput(t *testing.T) {
	root := tools.MustRepoRoot(t)
	data, err := os.ReadFile(filepath.Join(root, ".dockerignore"))
	if err != nil {
		t.Fatal(err)
	}
	var patterns []string
	for _, l := range strings.Split(string(data), "\n") {
		if l = strings.TrimSpace(l); l != "" && !strings.HasPrefix(l, "#") {
			patterns = append(patterns, l)
		}
	}

	needed := []string{"go.mod", "go.sum", buildScript}
	for _, img := range images {
		out := process.Command{Dir: root}.MustRun(t, "go", "list", "-deps", "-f", `{{if not .Standard}}{{$d := .Dir}}{{range .GoFiles}}{{$d}}/{{.}}{{"\n"}}{{end}}{{range .EmbedFiles}}{{$d}}/{{.}}{{"\n"}}{{end}}{{end}}`, "./cmd/"+img.binary)
		for _, f := range strings.Fields(out) {
			if rel, err := filepath.Rel(root, f); err == nil && !strings.HasPrefix(rel, "..") {
				needed = append(needed, filepath.ToSlash(rel))
			}
		}
	}
	if len(needed) <= 3 {
		t.Fatal("go list found no source files of the binaries")
	}
	for _, f := range needed {
		if dockerignored(patterns, f) {
			t.Errorf(".dockerignore leaves out %s, which the image build needs", f)
		}
	}
	for _, f := range []string{"bin/k8s-v1.36.3/kube-apiserver", "deploy/webhook/deployment.yaml", "test/manifests/doc.go", "pkg/version/version_test.go", ".git/config", "hack/tools/go.mod"} {
		if !dockerignored(patterns, f) {
			t.Errorf(".dockerignore lets %s into the build context", f)
		}
	}
}

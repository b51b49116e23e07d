package docs

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/kyma-project/kim-snatch/test/process"
	"github.com/kyma-project/kim-snatch/test/tools"
)

// kubectlCommand is one documented kubectl command line.
type kubectlCommand struct {
	doc  string
	line string
	args []string // after "kubectl", placeholders filled in
}

// placeholder matches what a reader fills in, <name>, and a shell
// variable that a documented script sets, such as "$job": each stands
// for a name the cluster need not hold.
var placeholder = regexp.MustCompile(`<[a-z][a-z-]*>|\$\{?[A-Za-z_][A-Za-z0-9_]*\}?`)

// versionVariable is a release version that the documents set once, at the
// top of a sequence, and their commands then use; documentedVersion stands
// in for it, a version that hack/release/release.sh --manifests renders.
var versionVariable = regexp.MustCompile(`\$(?:WEBHOOK_VERSION|SYNCER_VERSION)\b|\$\{(?:WEBHOOK_VERSION|SYNCER_VERSION)\}`)

const documentedVersion = "v0.1.0"

// yourOverlay is the operator's own overlay in the documents, and
// exampleOverlay the overlay of the repository that stands in for it.
const yourOverlay, exampleOverlay = "<your-overlay>", "deploy/examples/overlay"

// fillPlaceholders fills the placeholders of a documented command line so
// that it parses and names what it would in an installation: the release
// versions with documentedVersion, the operator's overlay with the example
// overlay, and every other <placeholder> with a word.
func fillPlaceholders(line string) string {
	line = versionVariable.ReplaceAllString(line, documentedVersion)
	line = strings.ReplaceAll(line, yourOverlay, exampleOverlay)
	return placeholder.ReplaceAllString(line, "placeholder")
}

// migrationGuide's commands are not dry-run here: they change the cluster
// step by step, and TestMigrationAndRollbackUnderLoadMissPodsOnlyInTheGuidesWindows in test/e2e/migration runs them
// for real, as written; TestMigrationGuideNamesExist checks the objects
// they name, in the code blocks and the inline code.
const migrationGuide = "docs/migration.md"

// kubectlCommands returns every kubectl command of the documents' code
// blocks and code spans, cut at the first pipe, except migrationGuide's; a
// line that captures a kubectl command's output, x=$(kubectl ...), counts.
func kubectlCommands(t *testing.T) []kubectlCommand {
	t.Helper()
	var out []kubectlCommand
	for _, d := range readDocs(t) {
		if d.path == migrationGuide {
			continue
		}
		lines := append(codeBlocks(d.text), inlineSpans(d.text)...)
		for _, l := range lines {
			l = strings.TrimSpace(l)
			if i := strings.Index(l, "$(kubectl "); i >= 0 {
				l = l[i+len("$("):] // shellWords stops at the closing parenthesis
			}
			if !strings.HasPrefix(l, "kubectl ") || strings.Contains(l, "...") {
				continue
			}
			cmd, _, _ := strings.Cut(l, " | ")
			args, err := shellWords(fillPlaceholders(cmd))
			if err != nil {
				t.Errorf("%s: %q: %v", d.path, l, err)
				continue
			}
			out = append(out, kubectlCommand{doc: d.path, line: l, args: args[1:]})
		}
	}
	if len(out) == 0 {
		t.Fatal("the documents hold no kubectl commands")
	}
	return out
}

// shellWords splits s as sh does for one simple command: words, single and
// double quotes and backslash escapes, up to the first unquoted operator,
// closing parenthesis or comment. An unterminated quote runs to the end of
// s and is reported beside the words.
func shellWords(s string) ([]string, error) {
	var words []string
	var cur strings.Builder
	inWord := false
	flush := func() {
		if inWord {
			words = append(words, cur.String())
			cur.Reset()
			inWord = false
		}
	}
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == ' ' || c == '\t':
			flush()
		case strings.IndexByte("|;&)<>`", c) >= 0 || c == '#' && !inWord:
			flush()
			return words, nil
		case c == '\'' || c == '"':
			j := strings.IndexByte(s[i+1:], c)
			if j < 0 {
				cur.WriteString(s[i+1:])
				inWord = true
				flush()
				return words, errUnterminated
			}
			cur.WriteString(s[i+1 : i+1+j])
			i += j + 1
			inWord = true
		case c == '\\' && i+1 < len(s):
			cur.WriteByte(s[i+1])
			i++
			inWord = true
		default:
			cur.WriteByte(c)
			inWord = true
		}
	}
	flush()
	return words, nil
}

// commandWords is shellWords for lines that may open a quote that a later
// line closes, such as a multi-line patch: such a quote runs to the end.
func commandWords(s string) []string {
	words, _ := shellWords(s)
	return words
}

type shellError string

func (e shellError) Error() string { return string(e) }

const errUnterminated = shellError("unterminated quote")

// verb returns the kubectl subcommand: the first word that is not a flag or
// a flag's value.
func verb(args []string) string {
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "-n" || a == "--namespace" {
			i++
			continue
		}
		if !strings.HasPrefix(a, "-") {
			return a
		}
	}
	return ""
}

// Every documented kubectl command parses, and the read-only ones succeed
// against a real API server that holds the objects of deploy/default: so
// resource names, field paths, JSONPath expressions and RBAC questions are
// checked, not just spelling. Commands that change the cluster or need a
// running Pod are validated with --help (subcommand and flags), and
// `kubectl apply` with a server-side dry run of what it names, the release
// files included.
func TestDocumentedKubectlCommandsHoldAgainstAnAPIServer(t *testing.T) {
	if testing.Short() {
		t.Skip("starts etcd and kube-apiserver")
	}
	root := tools.MustRepoRoot(t)
	// What the apply commands name: the release files, rendered by
	// hack/release/release.sh --manifests, beside a copy of deploy/.
	w := newWorkspace(t)
	s := startAPIServer(t)
	dir := root
	run := func(args ...string) (string, error) { return s.run(dir, args...) }

	for _, cmd := range kubectlCommands(t) {
		t.Run(cmd.doc+"/"+cmd.line, func(t *testing.T) {
			args := cmd.args
			switch verb(args) {
			case "get", "auth":
				stdout, err := run(args...)
				if err != nil && !strings.Contains(err.Error(), "NotFound") && !strings.Contains(err.Error(), "not found") {
					t.Fatal(err)
				}
				if verb(args) == "auth" && strings.TrimSpace(stdout) != "yes" {
					t.Fatalf("kubectl %s answers %q, want yes: the documented RBAC does not grant it", strings.Join(args, " "), stdout)
				}
			case "apply":
				for _, f := range parseKubectl(args).files {
					if _, err := w.render(f.flag, f.path); err != nil {
						t.Fatal(err)
					}
				}
				dir = w.dir
				_, err := run(append(args, "--server-side", "--dry-run=server")...)
				dir = root
				if err != nil {
					t.Fatal(err)
				}
			case pluginName:
				// kubectl kim-snatch: the cabundle-syncer binary as a plugin.
				checkInImage(t, append([]string{"/cabundle-syncer"}, args[1:]...))
			case "krew":
				checkKrewInstall(t, root, args)
			case "exec":
				kargs, ours, _ := cut(args, "--")
				if _, err := run(append(kargs, "--help")...); err != nil {
					t.Fatal(err)
				}
				checkInImage(t, ours)
			default:
				if _, err := run(append(args, "--help")...); err != nil {
					t.Fatal(err)
				}
			}
		})
	}
}

// checkKrewInstall checks that a documented krew command installs the
// manifest that hack/release/release.sh writes.
func checkKrewInstall(t *testing.T, root string, args []string) {
	t.Helper()
	if !slices.Equal(args, []string{"krew", "install", "--manifest=" + krewManifest}) {
		t.Fatalf("kubectl %s: want kubectl krew install --manifest=%s, the manifest make release writes", strings.Join(args, " "), krewManifest)
	}
	release, err := os.ReadFile(filepath.Join(root, "hack", "release", "release.sh"))
	if err != nil || !bytes.Contains(release, []byte(`"$out/`+krewManifest+`"`)) {
		t.Fatalf("hack/release/release.sh does not write %s: %v", krewManifest, err)
	}
}

// pluginName is the kubectl plugin that cabundle-syncer ships as, and
// krewManifest the krew manifest of a release (docs/releasing.md).
const pluginName, krewManifest = "kim-snatch", "kim-snatch.yaml"

func cut(args []string, sep string) (before, after []string, found bool) {
	for i, a := range args {
		if a == sep {
			return args[:i], args[i+1:], true
		}
	}
	return args, nil, false
}

var entrypoint = regexp.MustCompile(`(?m)^ENTRYPOINT \["([^"]+)"\]`)

// checkInImage checks a command run in a container with kubectl exec: the
// image is distroless, so it must name the image's entrypoint, and its
// arguments must parse.
func checkInImage(t *testing.T, command []string) {
	t.Helper()
	if len(command) == 0 {
		t.Fatal("kubectl exec without a command")
	}
	name := filepath.Base(command[0])
	dockerfile := map[string]string{"cabundle-syncer": "Dockerfile.syncer", "snatch-webhook": "Dockerfile.webhook"}[name]
	if dockerfile == "" {
		t.Fatalf("kubectl exec runs %s, which is in neither image; the images have no shell", command[0])
	}
	data, err := os.ReadFile(filepath.Join(tools.MustRepoRoot(t), dockerfile))
	if err != nil {
		t.Fatal(err)
	}
	m := entrypoint.FindSubmatch(data)
	if m == nil || string(m[1]) != command[0] {
		t.Fatalf("kubectl exec runs %s, but %s's entrypoint is %s", command[0], dockerfile, m)
	}
	args := command[1:]
	if len(args) > 0 && args[0] == "check" && checkFlags(t) == nil {
		t.Skip("cabundle-syncer has no check command yet: `cabundle-syncer check --help` answers unknown command")
	}
	if len(args) != 1 || args[0] != "--version" {
		args = append(args, "--help")
	}
	r, err := process.Command{}.Run(t.Context(), process.Binary(t, name), args...)
	out := r.Stdout + r.Stderr
	if err != nil && !strings.Contains(out, "Usage") || strings.Contains(out, "flag provided but not defined") {
		t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, r)
	}
}

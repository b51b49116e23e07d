package docs

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kyma-project/kim-snatch/test/framework/objects"
	"github.com/kyma-project/kim-snatch/test/runbook"
	"github.com/kyma-project/kim-snatch/test/tools"
)

// installDocuments are the documents whose kubectl commands install,
// upgrade, migrate or roll back: the READMEs and every page of docs/.
func installDocuments(t *testing.T) []doc {
	t.Helper()
	root := tools.MustRepoRoot(t)
	pages, err := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	var out []doc
	for _, p := range append([]string{filepath.Join(root, "README.md"), filepath.Join(root, "deploy", "README.md")}, pages...) {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		rel, _ := filepath.Rel(root, p)
		out = append(out, doc{path: filepath.ToSlash(rel), text: string(b)})
	}
	return out
}

// Every kubectl command of the documents that applies or creates from a
// file or a kustomization does so with server-side apply, and what it
// applies runs released images only: each image is pinned to a semver tag
// or a digest, never to the bases' placeholder 0.0.0-unreleased, which no
// registry holds. Every file or directory that any kubectl command names
// is provided by the repository, by a release (rendered here by
// `hack/release/release.sh --manifests` for the version the command names), or is
// the one file the operator brings. No document edits a base.
func TestDocumentedCommandsApplyReleasedImages(t *testing.T) {
	w := newWorkspace(t)
	calls := documentedKubectl(t)
	applied, named := 0, 0
	deployed := map[string]bool{}
	for _, c := range calls {
		a := parseKubectl(c.args)
		where := fmt.Sprintf("%s: `%s`", c.doc, c.line)
		if a.verb == "apply" && a.fromFiles && !a.serverSide {
			t.Errorf("%s applies client-side; every documented apply is server-side (--server-side), as the tests apply", where)
		}
		for _, f := range a.files {
			named++
			stream, err := w.render(f.flag, f.path)
			if err != nil {
				t.Errorf("%s: %v", where, err)
				continue
			}
			if a.verb != "apply" && a.verb != "create" {
				continue
			}
			applied++
			images, err := podImages(stream)
			if err != nil {
				t.Errorf("%s: %s: %v", where, f.path, err)
			}
			for _, img := range slices.Compact(slices.Sorted(slices.Values(images))) {
				deployed[img] = true
				if err := released(img); err != nil {
					t.Errorf("%s: %s deploys %s: %v", where, f.path, img, err)
				}
			}
		}
	}
	if applied == 0 {
		t.Fatal("no documented command applies a file or a kustomization")
	}
	t.Logf("%d kubectl commands, %d files or kustomizations named, %d applied or created; images: %v",
		len(calls), named, applied, sortedKeys(deployed))
	for _, d := range installDocuments(t) {
		text := d.text
		if d.path == verificationDoc {
			// Its downloads are every file of a release, which
			// TestDocumentedVerificationPassesAReleaseAndFailsATamperedFile serves from a release
			// it makes, signed, and runs.
			text = strings.Replace(text, fencedBlock(t, text, verificationHeading), "", 1)
		}
		for _, u := range releaseLinks.FindAllString(text, -1) {
			if _, err := w.provide(fillPlaceholders(u)); err != nil {
				t.Errorf("%s downloads %s: %v", d.path, u, err)
			}
		}
		for _, l := range codeBlocks(d.text) {
			if strings.Contains(l, "kustomize edit") {
				t.Errorf("%s: %q edits a kustomization; an installation changes an overlay of its own", d.path, strings.TrimSpace(l))
			}
		}
	}
}

var releaseLinks = regexp.MustCompile(`https://github\.com/kyma-project/kim-snatch/releases/download/[^\s)"'\x60]+`)

// kubectlCall is one kubectl invocation in a document's code.
type kubectlCall struct {
	doc, line string
	args      []string // after "kubectl", placeholders filled in
}

var kubectlWord = regexp.MustCompile(`(?:^|[\s("'\x60])kubectl\s`)

// documentedKubectl returns every kubectl invocation in the code blocks and
// code spans of installDocuments, also those inside $(...) or after a
// pipe, with continued lines joined.
func documentedKubectl(t *testing.T) []kubectlCall {
	t.Helper()
	var out []kubectlCall
	for _, d := range installDocuments(t) {
		for _, l := range append(runbook.JoinContinued(codeBlocks(d.text)), inlineSpans(d.text)...) {
			filled := fillPlaceholders(l)
			for _, loc := range kubectlWord.FindAllStringIndex(filled, -1) {
				start := loc[0] + strings.Index(filled[loc[0]:loc[1]], "kubectl") + len("kubectl")
				out = append(out, kubectlCall{doc: d.path, line: strings.TrimSpace(l), args: commandWords(filled[start:])})
			}
		}
	}
	if len(out) == 0 {
		t.Fatal("the documents hold no kubectl commands")
	}
	return out
}

// kubectlArgs is what the test needs of a command line.
type kubectlArgs struct {
	verb       string
	serverSide bool
	fromFiles  bool // -f or -k given, with a file, "-" or no value
	files      []fileArg
}

// fileArg is a -f or -k argument; `kubectl kustomize <dir>` is a -k.
type fileArg struct{ flag, path string }

func parseKubectl(args []string) kubectlArgs {
	a := kubectlArgs{verb: verb(args)}
	for i := 0; i < len(args); i++ {
		name, value, hasValue := strings.Cut(args[i], "=")
		switch name {
		case "--server-side":
			a.serverSide = !hasValue || value == "true"
		case "-f", "--filename", "-k", "--kustomize":
			a.fromFiles = true
			if !hasValue {
				if i+1 >= len(args) {
					continue // a mention of the flag, naming no file
				}
				i++
				value = args[i]
			}
			flag := "-f"
			if name == "-k" || name == "--kustomize" {
				flag = "-k"
			}
			if value != "-" {
				a.files = append(a.files, fileArg{flag: flag, path: value})
			}
		case "kustomize":
			if a.verb == "kustomize" && i+1 < len(args) && !strings.HasPrefix(args[i+1], "-") {
				a.files = append(a.files, fileArg{flag: "-k", path: args[i+1]})
				i++
			}
		}
	}
	return a
}

// podImages returns the image of every container, init container and
// ephemeral container of the Pods, Pod templates and CronJobs in stream.
func podImages(stream []byte) ([]string, error) {
	objs, err := objects.Decode(stream)
	var out []string
	for _, u := range objs {
		for _, path := range [][]string{{"spec"}, {"spec", "template", "spec"}, {"spec", "jobTemplate", "spec", "template", "spec"}} {
			for _, field := range []string{"containers", "initContainers", "ephemeralContainers"} {
				cs, _, _ := unstructured.NestedSlice(u.Object, append(path, field)...)
				for _, c := range cs {
					if img, ok := c.(map[string]any)["image"].(string); ok {
						out = append(out, img)
					}
				}
			}
		}
	}
	return out, err
}

var (
	digestRef = regexp.MustCompile(`@sha256:[0-9a-f]{64}$`)
	// Semantic Versioning 2.0.0, with or without the v of the tags.
	semverTag = regexp.MustCompile(`^v?(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)(-[0-9A-Za-z-]+(\.[0-9A-Za-z-]+)*)?$`)
)

// placeholderTag is the tag the bases carry until make release pins one.
const placeholderTag = "0.0.0-unreleased"

// released reports why an image reference is not one of a release: pinned
// to a digest, or tagged with a version.
func released(img string) error {
	if digestRef.MatchString(img) {
		return nil
	}
	name := img[strings.LastIndex(img, "/")+1:]
	_, tag, ok := strings.Cut(name, ":")
	switch {
	case !ok:
		return errors.New("no tag and no digest: it runs whatever latest is")
	case tag == placeholderTag:
		return fmt.Errorf("the bases' placeholder tag %s, which no registry holds: apply a release's install.yaml instead", placeholderTag)
	case !semverTag.MatchString(tag):
		return fmt.Errorf("the tag %s is neither a released version nor a digest", tag)
	}
	return nil
}

func TestReleasedAcceptsVersionsAndDigestsOnly(t *testing.T) {
	digest := "@sha256:" + strings.Repeat("ab", 32)
	for _, tt := range []struct {
		name, image string
		ok          bool
	}{
		{name: "version_tag_is_accepted", image: "europe-docker.pkg.dev/kyma-project/prod/snatch-webhook:v0.1.0", ok: true},
		{name: "version_tag_without_v_is_accepted", image: "europe-docker.pkg.dev/kyma-project/prod/kim-snatch:1.0.5", ok: true},
		{name: "pre_release_is_accepted", image: "registry:5000/cabundle-syncer:v0.2.0-rc.1", ok: true},
		{name: "digest_is_accepted", image: "europe-docker.pkg.dev/kyma-project/prod/snatch-webhook" + digest, ok: true},
		{name: "tag_and_digest_is_accepted", image: "europe-docker.pkg.dev/kyma-project/prod/snatch-webhook:v0.1.0" + digest, ok: true},
		{name: "placeholder_is_refused", image: "europe-docker.pkg.dev/kyma-project/prod/snatch-webhook:" + placeholderTag},
		{name: "no_tag_is_refused", image: "europe-docker.pkg.dev/kyma-project/prod/snatch-webhook"},
		{name: "registry_port_no_tag_is_refused", image: "registry:5000/snatch-webhook"},
		{name: "latest_is_refused", image: "snatch-webhook:latest"},
		{name: "local_tag_is_refused", image: "snatch-webhook:e2e"},
		{name: "short_digest_is_refused", image: "snatch-webhook@sha256:abc"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if err := released(tt.image); (err == nil) != tt.ok {
				t.Errorf("released(%q) = %v, want ok %v", tt.image, err, tt.ok)
			}
		})
	}
}

func TestParseKubectlFindsVerbModeAndFilesOfADocumentedLine(t *testing.T) {
	for _, tt := range []struct {
		name, line string
		want       kubectlArgs
	}{
		{name: "apply_file_is_server_side_with_its_file", line: "kubectl apply --server-side -f dist/snatch-webhook/v0.1.0/install.yaml",
			want: kubectlArgs{verb: "apply", serverSide: true, fromFiles: true, files: []fileArg{{"-f", "dist/snatch-webhook/v0.1.0/install.yaml"}}}},
		{name: "client_side_kustomization_is_not_server_side", line: "kubectl apply -k deploy/default # on Gardener",
			want: kubectlArgs{verb: "apply", fromFiles: true, files: []fileArg{{"-k", "deploy/default"}}}},
		{name: "flag_values_with_equals_are_read", line: "kubectl -n kyma-system apply --server-side=true --filename=a.yaml --kustomize=dir",
			want: kubectlArgs{verb: "apply", serverSide: true, fromFiles: true, files: []fileArg{{"-f", "a.yaml"}, {"-k", "dir"}}}},
		{name: "inside_command_substitution_is_found", line: `test -z "$(kubectl get -k deploy/syncer --ignore-not-found -o name)"`,
			want: kubectlArgs{verb: "get", fromFiles: true, files: []fileArg{{"-k", "deploy/syncer"}}}},
		{name: "stdin_gives_no_file", line: "kubectl apply -f - <<EOF", want: kubectlArgs{verb: "apply", fromFiles: true}},
		{name: "mode_named_in_prose_gives_no_file", line: "kubectl apply --server-side -k", want: kubectlArgs{verb: "apply", serverSide: true, fromFiles: true}},
		{name: "command_named_in_prose_gives_the_verb_alone", line: "kubectl apply", want: kubectlArgs{verb: "apply"}},
		{name: "kustomize_dir_is_a_k_argument", line: "kubectl kustomize deploy/examples/overlay",
			want: kubectlArgs{verb: "kustomize", files: []fileArg{{"-k", "deploy/examples/overlay"}}}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			loc := kubectlWord.FindStringIndex(tt.line)
			if loc == nil {
				t.Fatalf("no kubectl in %q", tt.line)
			}
			got := parseKubectl(commandWords(tt.line[loc[1]:]))
			if fmt.Sprint(got) != fmt.Sprint(tt.want) {
				t.Errorf("parseKubectl(%q) = %+v, want %+v", tt.line, got, tt.want)
			}
		})
	}
}

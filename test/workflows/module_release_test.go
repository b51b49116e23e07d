package workflows

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/pem"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/kyma-project/kim-snatch/test/framework/objects"
	"github.com/kyma-project/kim-snatch/test/process"
	"github.com/kyma-project/kim-snatch/test/tools"
)

// The module's release workflow and the file it reads each version's pair from.
const (
	moduleWorkflow = ".github/workflows/release-module.yml"
	modulePairs    = "hack/release/module-pairs.txt"
)

// workflow is what these tests read of a workflow: each job's steps.
type workflow struct {
	Jobs map[string]struct {
		Environment string   `json:"environment"`
		Needs       []string `json:"needs"`
		Steps       []struct {
			ID  string `json:"id"`
			Run string `json:"run"`
		} `json:"steps"`
	} `json:"jobs"`
}

func readModuleWorkflow(t *testing.T) workflow {
	t.Helper()
	var w workflow
	if err := objects.ReadFile(filepath.Join(tools.MustRepoRoot(t), moduleWorkflow), &w); err != nil {
		t.Fatal(err)
	}
	return w
}

// stepScript returns the run: script of the step with id in job.
func stepScript(t *testing.T, w workflow, job, id string) string {
	t.Helper()
	for _, s := range w.Jobs[job].Steps {
		if s.ID == id {
			if s.Run == "" {
				t.Fatalf("%s: job %s, step %s runs no script", moduleWorkflow, job, id)
			}
			return s.Run
		}
	}
	t.Fatalf("%s: job %s has no step with id %s", moduleWorkflow, job, id)
	return ""
}

// run runs script with bash in dir, with only env and PATH (env -i: a
// Command adds to the test's environment), and returns what it wrote to
// $GITHUB_OUTPUT as a map, how it ended, and whether it succeeded. The
// runner reads a step's workflow commands, ::error:: among them, from its
// standard output.
func run(t *testing.T, script, dir string, env ...string) (outputs map[string]string, r process.Result, ok bool) {
	t.Helper()
	output := filepath.Join(t.TempDir(), "github-output")
	args := append([]string{"-i", "PATH=" + os.Getenv("PATH"), "GITHUB_OUTPUT=" + output}, env...)
	r, err := process.Command{Dir: dir}.Run(t.Context(), "env", append(args, "bash", "-c", script)...)
	if r.Code < 0 {
		t.Fatal(err)
	}
	outputs = map[string]string{}
	data, _ := os.ReadFile(output)
	for l := range strings.SplitSeq(strings.TrimSpace(string(data)), "\n") {
		if k, v, found := strings.Cut(l, "="); found {
			outputs[k] = v
		}
	}
	return outputs, r, err == nil
}

// moduleVersion is what lifecycle-manager takes as a module version, and
// binaryVersion a binary's released version that a label can hold
// (docs/releasing.md, "Versions of the module" and "Versions and tags").
var (
	moduleVersion = regexp.MustCompile(`^(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)(-[a-z-][0-9a-z-]*)?$`)
	binaryVersion = regexp.MustCompile(`^v(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)(-[0-9A-Za-z-]+(\.[0-9A-Za-z-]+)*)?$`)
)

// pairProblems returns what is wrong with the lines of a pairs file: each
// line that is not a comment names a module version once, with one
// version of each binary.
func pairProblems(text string) []string {
	var problems []string
	seen := map[string]bool{}
	for i, l := range strings.Split(text, "\n") {
		fields := strings.Fields(l)
		if len(fields) == 0 || strings.HasPrefix(fields[0], "#") {
			continue
		}
		at := fmt.Sprintf("line %d %q", i+1, l)
		switch {
		case len(fields) != 3:
			problems = append(problems, at+": want <module-version> <snatch-webhook version> <cabundle-syncer version>")
			continue
		case !moduleVersion.MatchString(fields[0]) || len(fields[0]) > 32:
			problems = append(problems, at+": not a module version that lifecycle-manager takes")
		case seen[fields[0]]:
			problems = append(problems, at+": a second line for "+fields[0])
		}
		seen[fields[0]] = true
		for _, v := range fields[1:] {
			if !binaryVersion.MatchString(v) {
				problems = append(problems, at+": "+v+" is not a binary's release version")
			}
		}
	}
	return problems
}

// Every line of the committed pairs file names a module version once, as
// lifecycle-manager takes it, with a released version of each binary; the
// rule rejects what the file must not hold.
func TestModulePairsNameEachVersionOnceWithBothBinaries(t *testing.T) {
	data, err := os.ReadFile(filepath.Join(tools.MustRepoRoot(t), modulePairs))
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range pairProblems(string(data)) {
		t.Errorf("%s: %s", modulePairs, p)
	}
	for text, want := range map[string]int{
		"# comment\n2.0.0 v0.1.0 v0.1.0\n2.0.0-bridge-1 v0.1.0 v0.1.0-rc.1\n": 0,
		"2.0.0 v0.1.0\n":                             1,
		"v2.0.0 v0.1.0 v0.1.0\n":                     1,
		"2.0.0-Bridge.1 v0.1.0 v0.1.0\n":             1,
		"2.0.0 v0.1.0 v0.1.0+build\n":                1,
		"2.0.0 0.1.0 v0.1.0\n":                       1,
		"2.0.0 v0.1.0 v0.1.0\n2.0.0 v0.2.0 v0.1.0\n": 1,
	} {
		if got := pairProblems(text); len(got) != want {
			t.Errorf("pairProblems(%q) = %q, want %d problem(s)", text, got, want)
		}
	}
}

// The check job takes the module version from the tag and the pair from
// the pairs file at the commit, and marks bridge versions; a version
// without exactly one line fails, naming the file.
func TestModuleWorkflowTakesThePairFromTheRepository(t *testing.T) {
	script := stepScript(t, readModuleWorkflow(t), "check", "pair")
	checkout := t.TempDir()
	if err := os.MkdirAll(filepath.Join(checkout, "hack", "release"), 0o750); err != nil {
		t.Fatal(err)
	}
	pairs := "# <module-version> <snatch-webhook version> <cabundle-syncer version>\n" +
		"2.0.0-bridge-1 v0.3.0 v0.2.1\n" +
		"2.0.0 v0.3.0 v0.2.1\n" +
		"2.1.0 v0.4.0 v0.2.1\n" +
		"2.2.0 v0.5.0 v0.2.1\n2.2.0 v0.5.1 v0.2.1\n" +
		"2.3.0 v0.5.0\n"
	if err := os.WriteFile(filepath.Join(checkout, filepath.FromSlash(modulePairs)), []byte(pairs), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		tag  string
		want map[string]string // nil: the step fails
		says string            // in the log of a failure
	}{
		{tag: "kim-snatch/2.1.0", want: map[string]string{"version": "2.1.0", "webhook": "v0.4.0", "syncer": "v0.2.1", "bridge": "false"}},
		{tag: "kim-snatch/2.0.0", want: map[string]string{"version": "2.0.0", "webhook": "v0.3.0", "syncer": "v0.2.1", "bridge": "false"}},
		{tag: "kim-snatch/2.0.0-bridge-1", want: map[string]string{"version": "2.0.0-bridge-1", "webhook": "v0.3.0", "syncer": "v0.2.1", "bridge": "true"}},
		{tag: "kim-snatch/2.0.1", says: modulePairs + " has no line for the module version 2.0.1"},
		{tag: "kim-snatch/2.0.0-bridge-2", says: "no line for the module version 2.0.0-bridge-2"},
		{tag: "kim-snatch/2.2.0", says: "more than one line"},
		{tag: "kim-snatch/2.3.0", says: "is not '<module-version>"},
	} {
		t.Run(tt.tag, func(t *testing.T) {
			got, r, ok := run(t, script, checkout, "GITHUB_REF_NAME="+tt.tag)
			switch {
			case tt.want == nil && ok:
				t.Errorf("the step passed with outputs %v; want a failure saying %q", got, tt.says)
			case tt.want == nil && !strings.Contains(r.Stdout, tt.says):
				t.Errorf("the step failed with\n%s\nwant it to say %q", r, tt.says)
			case tt.want != nil && !ok:
				t.Errorf("the step failed:\n%s", r)
			case tt.want != nil && fmt.Sprint(got) != fmt.Sprint(tt.want):
				t.Errorf("outputs %v, want %v", got, tt.want)
			}
		})
	}
}

// A bridge version's kim-snatch manifest is taken from the URL of a
// repository variable only when its sha256 is the other variable's; a
// changed manifest, or a missing or malformed variable, fails the step
// without handing a manifest on. Both jobs run the same step.
func TestModuleWorkflowTakesTheKimSnatchManifestOnlyByItsChecksum(t *testing.T) {
	w := readModuleWorkflow(t)
	script := stepScript(t, w, "check", "manifest")
	if other := stepScript(t, w, "release", "manifest"); other != script {
		t.Errorf("the release job's manifest step differs from the check job's:\n%s\nwant\n%s", other, script)
	}
	if job := w.Jobs["release"]; job.Environment != "release" || strings.Join(job.Needs, ",") != "check" {
		t.Errorf("the release job has environment %q and needs %v; want the environment release, after check alone", job.Environment, job.Needs)
	}

	manifest := []byte("# kim-snatch 1.0.16\napiVersion: v1\nkind: ServiceAccount\nmetadata:\n  name: kim-snatch\n")
	srv := httptest.NewTLSServer(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/kim-snatch.yaml" {
			http.NotFound(rw, r)
			return
		}
		_, _ = rw.Write(manifest)
	}))
	defer srv.Close()
	caFile := filepath.Join(t.TempDir(), "ca.pem")
	ca := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw})
	if err := os.WriteFile(caFile, ca, 0o600); err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(manifest)
	good := hex.EncodeToString(sum[:])
	changed := sha256.Sum256(append([]byte("# changed\n"), manifest...))
	url := srv.URL + "/kim-snatch.yaml"

	for _, tt := range []struct {
		name, url, sha256 string
		ok                bool
		says              string
	}{
		{name: "matching_checksum_hands_on_the_manifest", url: url, sha256: good, ok: true},
		{name: "other_checksum_fails", url: url, sha256: hex.EncodeToString(changed[:]), says: "is not the manifest of KIM_SNATCH_MANIFEST_SHA256"},
		{name: "no_url_fails", sha256: good, says: "set the repository variables KIM_SNATCH_MANIFEST_URL"},
		{name: "no_checksum_fails", url: url, says: "KIM_SNATCH_MANIFEST_SHA256"},
		{name: "short_checksum_fails", url: url, sha256: good[:40], says: "64 hex digits"},
		{name: "not_found_fails", url: srv.URL + "/other.yaml", sha256: good},
		{name: "plain_http_fails", url: strings.Replace(url, "https://", "http://", 1), sha256: good},
	} {
		t.Run(tt.name, func(t *testing.T) {
			temp := t.TempDir()
			got, r, ok := run(t, script, t.TempDir(), "URL="+tt.url, "SHA256="+tt.sha256, "RUNNER_TEMP="+temp,
				"CURL_CA_BUNDLE="+caFile, "NO_PROXY=127.0.0.1", "no_proxy=127.0.0.1")
			if !tt.ok {
				switch {
				case ok:
					t.Errorf("the step passed with outputs %v", got)
				case got["manifest"] != "":
					t.Errorf("the failed step handed on the manifest %s", got["manifest"])
				case !strings.Contains(r.Stdout, tt.says):
					t.Errorf("the step failed with\n%s\nwant it to say %q", r, tt.says)
				}
				return
			}
			if !ok {
				t.Fatalf("the step failed:\n%s", r)
			}
			data, err := os.ReadFile(got["manifest"])
			if err != nil {
				t.Fatalf("the step's manifest: %v", err)
			}
			if string(data) != string(manifest) || filepath.Dir(got["manifest"]) != temp {
				t.Errorf("the step handed on %s with %q; want the served manifest under RUNNER_TEMP", got["manifest"], data)
			}
		})
	}
}

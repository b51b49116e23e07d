package manifests

import (
	"fmt"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"

	"github.com/kyma-project/kim-snatch/test/tools"
)

// What the release is built from cannot move under a commit: every action
// of the workflows is pinned by the commit of its release, and every image
// the Dockerfiles build from by its digest (docs/releasing.md,
// "Dependencies").

// workflowsDir holds the workflows; testdata/pinning the fixtures that the
// checks below must reject.
const (
	workflowsDir    = ".github/workflows"
	pinningFixtures = "testdata/pinning"
)

var (
	// An action or another repository's workflow, pinned by a commit:
	// owner/repo[/path]@<40 hex digits>.
	commitPinned = regexp.MustCompile(`^[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+(/[^@]+)?@[0-9a-f]{40}$`)
	// A container action pinned by digest.
	digestPinned = regexp.MustCompile(`^docker://[^@]+@sha256:[0-9a-f]{64}$`)
	// A FROM pinned by digest.
	imagePinned = regexp.MustCompile(`@sha256:[0-9a-f]{64}$`)
)

// workflowUses is what a workflow's jobs use: a reusable workflow, or each
// step's action.
type workflowUses struct {
	Jobs map[string]struct {
		Uses  string `json:"uses"`
		Steps []struct {
			Uses string `json:"uses"`
		} `json:"steps"`
	} `json:"jobs"`
}

// unpinnedUses parses a workflow and returns each uses: that a tag or a
// branch could move: all but those pinned by a commit, with the release's
// tag in a comment on the same line for Renovate
// (helpers:pinGitHubActionDigests), local actions and workflows (./), and
// container actions pinned by digest. It returns how many it checked.
func unpinnedUses(workflow []byte) (bad []string, checked int, err error) {
	var w workflowUses
	if err := yaml.Unmarshal(workflow, &w); err != nil {
		return nil, 0, err
	}
	var uses []string
	for _, job := range w.Jobs {
		if job.Uses != "" {
			uses = append(uses, job.Uses)
		}
		for _, s := range job.Steps {
			if s.Uses != "" {
				uses = append(uses, s.Uses)
			}
		}
	}
	slices.Sort(uses)
	for _, u := range slices.Compact(uses) {
		checked++
		switch {
		case strings.HasPrefix(u, "./"), digestPinned.MatchString(u):
		case !commitPinned.MatchString(u):
			bad = append(bad, u+": not pinned by a commit")
		case !regexp.MustCompile(`(?m)uses:\s*["']?` + regexp.QuoteMeta(u) + `["']?\s+#\s*v\d`).Match(workflow):
			bad = append(bad, u+": no comment with the release's tag")
		}
	}
	return bad, checked, nil
}

// Every workflow pins every action by a commit of its release.
func TestWorkflowsPinEveryActionByCommit(t *testing.T) {
	dir := filepath.Join(tools.MustRepoRoot(t), filepath.FromSlash(workflowsDir))
	files, err := filepath.Glob(filepath.Join(dir, "*.y*ml"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no workflows in %s: %v", workflowsDir, err)
	}
	total := 0
	for _, f := range files {
		bad, checked, err := unpinnedUses([]byte(readFile(t, f)))
		if err != nil {
			t.Errorf("%s: %v", filepath.Base(f), err)
		}
		for _, b := range bad {
			t.Errorf("%s: %s", filepath.Base(f), b)
		}
		total += checked
	}
	if total == 0 {
		t.Errorf("the workflows of %s use no action: the check checked nothing", workflowsDir)
	}
}

// The check rejects a step pinned by a tag, a commit without its tag's
// comment and another repository's workflow called by a tag, and lets local
// actions, local workflows and digests pass.
func TestUnpinnedUsesRejectsWhatCanMove(t *testing.T) {
	for _, tt := range []struct {
		fixture string
		want    []string
	}{
		{fixture: "tag-pinned.yml", want: []string{"actions/setup-go@v5: not pinned by a commit"}},
		{fixture: "uncommented.yml", want: []string{"actions/checkout@11d5960a326750d5838078e36cf38b85af677262: no comment with the release's tag"}},
		{fixture: "remote-reusable.yml", want: []string{"octo-org/workflows/.github/workflows/build.yml@v1: not pinned by a commit"}},
	} {
		t.Run(strings.TrimSuffix(tt.fixture, ".yml"), func(t *testing.T) {
			bad, _, err := unpinnedUses([]byte(readFile(t, filepath.Join(pinningFixtures, tt.fixture))))
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(bad, tt.want) {
				t.Errorf("unpinnedUses reports %q, want %q", bad, tt.want)
			}
		})
	}
}

// unpinnedFroms returns each FROM of the stages that is not pinned by a
// digest and does not name an earlier stage.
func unpinnedFroms(stages []stage) []string {
	var bad, names []string
	for _, s := range stages {
		if !imagePinned.MatchString(s.from) && !slices.Contains(names, s.from) {
			bad = append(bad, fmt.Sprintf("FROM %s: not pinned by a digest", s.from))
		}
		names = append(names, s.name)
	}
	return bad
}

// Both Dockerfiles build from images pinned by digest, and ship on one
// distroless base, the one the image's SBOM names.
func TestDockerfilesPinEveryImageByDigest(t *testing.T) {
	bases := map[string]bool{}
	for _, img := range images {
		stages := parseDockerfile(t, filepath.Join(tools.MustRepoRoot(t), img.dockerfile))
		for _, b := range unpinnedFroms(stages) {
			t.Errorf("%s: %s", img.dockerfile, b)
		}
		base := stages[len(stages)-1].from
		if !strings.HasPrefix(base, "gcr.io/distroless/static:nonroot@") {
			t.Errorf("%s: final FROM %s, want gcr.io/distroless/static:nonroot@sha256:<digest>", img.dockerfile, base)
		}
		bases[base] = true
	}
	if len(bases) != 1 {
		t.Errorf("the Dockerfiles ship on different bases: %v", bases)
	}
	fixture := parseDockerfile(t, filepath.Join(pinningFixtures, "unpinned-base.Dockerfile"))
	if got, want := unpinnedFroms(fixture), []string{"FROM gcr.io/distroless/static:nonroot: not pinned by a digest"}; !slices.Equal(got, want) {
		t.Errorf("on a base pinned by tag alone the check reports %q, want %q", got, want)
	}
}

package docs

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"

	"github.com/kyma-project/kim-snatch/test/process"
	"github.com/kyma-project/kim-snatch/test/tools"
)

// overlayGuide and overlayHeading are where deploy/README.md installs
// through the example overlay.
const overlayGuide, overlayHeading = "deploy/README.md", "Changing the installation"

// The versions an operator sets once, $WEBHOOK_VERSION and $SYNCER_VERSION,
// are the releases the example overlay installs: the section's sed line,
// run by sh as written over a copy of deploy/examples/overlay, leaves in
// its resources exactly the release file of each binary at its own version,
// and changes no other line; run again, as an upgrade of one binary runs
// it, it moves that binary alone.
func TestOverlayInstallsTheVersionsSetOnce(t *testing.T) {
	var guide doc
	for _, d := range installDocuments(t) {
		if d.path == overlayGuide {
			guide = d
		}
	}
	var line string
	for _, l := range codeBlocks(guide.section(t, overlayHeading)) {
		if l = strings.TrimSpace(l); strings.HasPrefix(l, "sed ") {
			if line != "" {
				t.Fatalf("%s, %s: two sed lines", overlayGuide, overlayHeading)
			}
			line = l
		}
	}
	if line == "" {
		t.Fatalf("%s, %s: no sed line writes the versions into the overlay", overlayGuide, overlayHeading)
	}
	original, err := os.ReadFile(filepath.Join(tools.MustRepoRoot(t), filepath.FromSlash(exampleOverlay), "kustomization.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	kustomization := filepath.Join(dir, filepath.FromSlash(exampleOverlay), "kustomization.yaml")
	if err := os.MkdirAll(filepath.Dir(kustomization), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(kustomization, original, 0o644); err != nil {
		t.Fatal(err)
	}
	before := string(original)
	for _, step := range []struct{ name, webhook, syncer string }{
		{name: "install", webhook: "v0.2.0", syncer: "v0.3.1"},
		{name: "upgrade_the_webhook_alone", webhook: "v0.2.1", syncer: "v0.3.1"},
		{name: "a_pre_release", webhook: "v0.2.1", syncer: "v1.0.0-rc.1"},
	} {
		c := process.Command{Dir: dir, Env: []string{"WEBHOOK_VERSION=" + step.webhook, "SYNCER_VERSION=" + step.syncer}}
		if _, err := c.Run(t.Context(), "sh", "-c", line); err != nil {
			t.Fatalf("%s: %v", step.name, err)
		}
		b, err := os.ReadFile(kustomization)
		if err != nil {
			t.Fatal(err)
		}
		var k struct {
			Resources []string `json:"resources"`
		}
		if err := yaml.Unmarshal(b, &k); err != nil {
			t.Fatalf("%s: the overlay no longer parses: %v", step.name, err)
		}
		want := []string{"dist/snatch-webhook/" + step.webhook + "/install.yaml", "dist/cabundle-syncer/" + step.syncer + "/install.yaml"}
		if !slices.Equal(k.Resources, want) {
			t.Errorf("%s: resources %q, want %q", step.name, k.Resources, want)
		}
		after := string(b)
		if changed := changedLines(before, after); len(changed) > 2 || slices.ContainsFunc(changed, func(l string) bool { return !strings.HasPrefix(strings.TrimSpace(l), "- dist/") }) {
			t.Errorf("%s: the sed line changed more than the release files' lines: %q", step.name, changed)
		}
		before = after
	}
}

// changedLines returns the lines of b that differ from a's at the same
// place; a and b must have as many lines.
func changedLines(a, b string) []string {
	al, bl := strings.Split(a, "\n"), strings.Split(b, "\n")
	if len(al) != len(bl) {
		return []string{"(line count changed)"}
	}
	var out []string
	for i := range al {
		if al[i] != bl[i] {
			out = append(out, bl[i])
		}
	}
	return out
}

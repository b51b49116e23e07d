package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kyma-project/kim-snatch/pkg/check"
	"github.com/kyma-project/kim-snatch/test/framework"
)

// pluginName is the file name kubectl looks up for `kubectl kim-snatch`:
// kubectl- and the plugin's name with its dash as an underscore, as krew
// installs it (docs/operations.md, "check as a kubectl plugin").
const pluginName = "kubectl-kim_snatch"

// The operators' checklist as a kubectl plugin: the cabundle-syncer binary
// under the name kubectl-kim_snatch on PATH, found by kubectl's own plugin
// lookup, reports what `cabundle-syncer check` reports, with its exit code.
func TestKubectlPluginReportsWhatCheckReports(t *testing.T) {
	framework.InTier(t, framework.Full, "a second way to run the check; the smoke runs it once")
	framework.Shares(t)
	c := newChecker(t)
	kubectl, err := framework.Kubectl()
	if err != nil {
		t.Fatal(err)
	}
	dir := installPlugin(t, c)
	plugin := pluginRunner{kubectl: kubectl, path: dir + string(os.PathListSeparator) + os.Getenv("PATH")}

	if list := plugin.run(t, "plugin", "list"); list.code != 0 || !strings.Contains(list.stdout, filepath.Join(dir, pluginName)) {
		t.Fatalf("kubectl plugin list does not find %s:\n%s", pluginName, list)
	}
	if v := plugin.run(t, "kim-snatch", "--version"); v.code != 0 || !strings.HasPrefix(v.stdout, "cabundle-syncer ") {
		t.Errorf("kubectl kim-snatch --version: want the binary's own version line:\n%s", v)
	}

	// docs/operations.md: kubectl kim-snatch check --kubeconfig ~/.kube/config
	run := plugin.run(t, "kim-snatch", "check", "--kubeconfig", sys.KubeconfigPath())
	logf("kubectl kim-snatch check on a healthy installation (%s):\n%s", run.took.Round(time.Millisecond), run.stdout)
	assertTable(t, run, nil)

	run = plugin.run(t, "kim-snatch", "check", "--kubeconfig", sys.KubeconfigPath(), "-o", "json")
	r, err := decodeReport(run.stdout, false)
	if err != nil {
		t.Fatalf("%v\n%s", err, run)
	}
	assertReport(t, run, r, nil)
	if r.SchemaVersion != check.SchemaVersion {
		t.Errorf("schemaVersion %q, want %q", r.SchemaVersion, check.SchemaVersion)
	}
}

// installPlugin puts the check's binary into a directory of its own under
// pluginName, as krew does, and returns the directory, for PATH.
func installPlugin(t *testing.T, c checker) string {
	t.Helper()
	dir := t.TempDir()
	binary, err := os.ReadFile(c.bin)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, pluginName), binary, 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}

// pluginRunner runs kubectl with the plugin's directory first on PATH.
type pluginRunner struct{ kubectl, path string }

// run runs kubectl args... in an environment that names no cluster of its
// own, as checker.run does (runWithoutCluster).
func (p pluginRunner) run(t *testing.T, args ...string) checkRun {
	t.Helper()
	run, err := runWithoutCluster(p.kubectl, args, []string{"PATH=" + p.path}, "PATH")
	if err != nil {
		t.Fatalf("run %s %v: %v", p.kubectl, args, err)
	}
	return run
}

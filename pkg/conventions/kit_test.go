package conventions

import (
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// modulePath is the import path of the repository's module.
const modulePath = "github.com/kyma-project/kim-snatch/"

// kitPackages reads test/README.md's table of the kit, in its order: a kit
// package may import those before it.
func kitPackages(t *testing.T) []string {
	t.Helper()
	readme, err := os.ReadFile(filepath.Join("..", "..", "test", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	var kit []string
	for _, m := range regexp.MustCompile("(?m)^\\| `(test/[a-z0-9/]+)` \\|").FindAllSubmatch(readme, -1) {
		kit = append(kit, string(m[1]))
	}
	if len(kit) < 5 {
		t.Fatalf("test/README.md lists %d kit packages, want its whole table", len(kit))
	}
	return kit
}

// The test kit's dependency rule (test/README.md): a kit package imports
// only kit packages above it in the table; a suite imports the kit and its
// own subpackages, never another suite; production code imports nothing
// under test/.
func TestTheKitImportsOnlyWhatItsRuleAllows(t *testing.T) {
	_, files := sources(t)
	kit := kitPackages(t)
	checked := 0
	for _, src := range files {
		dir := path.Dir(src.path)
		for _, imp := range src.file.Imports {
			p, err := strconv.Unquote(imp.Path.Value)
			if err != nil || !strings.HasPrefix(p, modulePath+"test/") {
				continue
			}
			checked++
			// A kit package's own tests use the kit as a suite does.
			at := slices.Index(kit, dir)
			if strings.HasSuffix(src.path, "_test.go") {
				at = -1
			}
			if why := kitRuleBroken(kit, at, dir, strings.TrimPrefix(p, modulePath), src.production); why != "" {
				t.Errorf("%s imports %s: %s", src.path, p, why)
			}
		}
	}
	if checked < 100 {
		t.Fatalf("checked %d imports of test/ packages, want all of them", checked)
	}
}

// suiteTree is the tree of test/ that dir is in: test/<name>.
func suiteTree(dir string) string {
	parts := strings.SplitN(dir, "/", 3)
	return strings.Join(parts[:min(2, len(parts))], "/")
}

// kitRuleBroken says how dir's import of pkg breaks the rule, or "": at is
// dir's place in the kit, or -1 for a suite.
func kitRuleBroken(kit []string, at int, dir, pkg string, production bool) string {
	switch want := slices.Index(kit, pkg); {
	case production:
		return "production code imports nothing under test/"
	case at >= 0 && (want < 0 || want >= at):
		return "a kit package imports only the kit packages above it in test/README.md"
	case at >= 0, want >= 0:
		return ""
	case suiteTree(pkg) == suiteTree(dir):
		return "" // a suite and its own commands and helpers
	default:
		return "not in the kit (test/README.md): a suite imports no other suite"
	}
}

// The rule's decisions, on a kit of three: each way to break it is found.
func TestKitRuleFindsEachWayToBreakIt(t *testing.T) {
	kit := []string{"test/tools", "test/process", "test/framework"}
	cases := []struct {
		name, dir, pkg string
		at             int
		production     bool
		broken         bool
	}{
		{"kit_imports_the_kit_above_it_is_allowed", "test/framework", "test/tools", 2, false, false},
		{"kit_imports_the_kit_below_it_is_refused", "test/tools", "test/framework", 0, false, true},
		{"kit_imports_itself_is_refused", "test/process", "test/process", 1, false, true},
		{"kit_imports_a_suite_is_refused", "test/framework", "test/e2e", 2, false, true},
		{"suite_imports_the_kit_is_allowed", "test/docs", "test/framework", -1, false, false},
		{"suite_imports_its_own_tree_is_allowed", "test/bench/cmd/x", "test/bench/internal/command", -1, false, false},
		{"suite_imports_another_suite_is_refused", "test/e2e", "test/bench", -1, false, true},
		{"production_imports_the_kit_is_refused", "pkg/check", "test/framework", -1, true, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			why := kitRuleBroken(kit, tc.at, tc.dir, tc.pkg, tc.production)
			if (why != "") != tc.broken {
				t.Errorf("%s imports %s: broken %q, want broken %v", tc.dir, tc.pkg, why, tc.broken)
			}
		})
	}
}

package manifests

import (
	"strings"
	"testing"

	"github.com/kyma-project/kim-snatch/test/process"
	"github.com/kyma-project/kim-snatch/test/tools"
)

const module = "github.com/kyma-project/kim-snatch"

// isTestHelper reports whether a package of the module exists for tests
// only: every package under test/, and the packages under pkg/ named
// <subject>test, as the standard library names httptest (pkg/certtest,
// pkg/syncer/syncertest, pkg/check/checktest).
func isTestHelper(importPath, name string) bool {
	return strings.HasPrefix(importPath, module+"/test/") ||
		strings.HasPrefix(importPath, module+"/pkg/") && strings.HasSuffix(name, "test")
}

// The code that ships, the non-test files under cmd/ and pkg/ other than
// the test helper packages, imports no test helper package: the binaries
// link no test PKI, fixtures or control plane. The helpers may import each
// other and anything else.
func TestProductionCodeImportsNoTestHelper(t *testing.T) {
	out := process.Command{Dir: tools.MustRepoRoot(t)}.MustRun(t, "go", "list", "-f", `{{.ImportPath}} {{.Name}}{{range .Imports}} {{.}}{{end}}`, "./cmd/...", "./pkg/...")
	type pkg struct {
		path, name string
		imports    []string
	}
	var pkgs []pkg
	helpers := map[string]bool{}
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		f := strings.Fields(line)
		if len(f) < 2 {
			t.Fatalf("go list printed %q", line)
		}
		p := pkg{path: f[0], name: f[1], imports: f[2:]}
		pkgs = append(pkgs, p)
		if isTestHelper(p.path, p.name) {
			helpers[p.path] = true
		}
	}
	for _, want := range []string{"pkg/certtest", "pkg/syncer/syncertest", "pkg/check/checktest"} {
		if !helpers[module+"/"+want] {
			t.Errorf("go list found no test helper package %s: the rule checks nothing it should", want)
		}
	}
	production := 0
	for _, p := range pkgs {
		if helpers[p.path] {
			continue
		}
		production++
		for _, imp := range p.imports {
			if helpers[imp] || strings.HasPrefix(imp, module+"/test/") {
				t.Errorf("%s imports the test helper package %s; only tests, test/ and other test helpers may", p.path, imp)
			}
		}
	}
	if production < 10 {
		t.Errorf("go list found %d production packages, want the packages of cmd/ and pkg/", production)
	}
}

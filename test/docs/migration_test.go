package docs

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kyma-project/kim-snatch/pkg/syncer"
	"github.com/kyma-project/kim-snatch/test/framework"
	"github.com/kyma-project/kim-snatch/test/framework/objects"
	"github.com/kyma-project/kim-snatch/test/tools"
)

// oldRelease is the old kim-snatch release manifest the migration scenario
// runs against (test/e2e/migration).
const oldRelease = "test/e2e/kimsnatch/testdata/install.yaml"

// objectRef matches the objects the migration guide's kubectl commands
// name, as type/name or as "type name"; the types are the ones it uses.
var objectRef = regexp.MustCompile(`\b(deployment|cronjob|job|certificates\.cert\.gardener\.cloud|secret|lease|mutatingwebhookconfiguration)[/ ]([a-z0-9][a-z0-9.-]*[a-z0-9])\b`)

// createdJob matches a Job the guide creates itself.
var createdJob = regexp.MustCompile(`create job --from=\S+ ([a-z0-9-]+)`)

// The migration guide's commands change the cluster and run only in the
// scenario of test/e2e/migration, which runs its code blocks but not its
// inline code. Every object that its code blocks and inline code name
// exists in one of the two installations: deploy/default, or the old
// release manifest; or the installations write it (the Certificates'
// Secret, the syncer's Lease), or the guide creates it (its Job).
func TestMigrationGuideNamesExist(t *testing.T) {
	root := tools.MustRepoRoot(t)
	rendered, err := framework.Kustomize("deploy/default")
	if err != nil {
		t.Fatal(err)
	}
	old, err := os.ReadFile(filepath.Join(root, oldRelease))
	if err != nil {
		t.Fatal(err)
	}
	known := map[string]bool{"lease/" + syncer.DefaultLeaseName: true}
	for _, stream := range [][]byte{rendered, old} {
		if err := addObjects(known, stream); err != nil {
			t.Fatal(err)
		}
	}
	d := readDoc(t, migrationGuide)
	code := strings.Join(append(codeBlocks(d.text), inlineSpans(d.text)...), "\n")
	for _, m := range createdJob.FindAllStringSubmatch(code, -1) {
		known["job/"+m[1]] = true
	}
	refs := 0
	for _, m := range objectRef.FindAllStringSubmatch(code, -1) {
		refs++
		kind := m[1]
		if kind == "certificates.cert.gardener.cloud" {
			kind = "certificate"
		}
		if !known[kind+"/"+m[2]] {
			t.Errorf("%s names %s %s, which neither installation has", migrationGuide, m[1], m[2])
		}
	}
	if refs == 0 {
		t.Fatalf("%s names no object", migrationGuide)
	}
}

// addObjects adds kind/name of each object of a YAML stream to known, in
// lower case, and the Secret each Certificate writes.
func addObjects(known map[string]bool, stream []byte) error {
	objs, err := objects.Decode(stream)
	for _, u := range objs {
		known[strings.ToLower(u.GetKind())+"/"+u.GetName()] = true
		if secret, _, _ := unstructured.NestedString(u.Object, "spec", "secretRef", "name"); u.GetKind() == "Certificate" && secret != "" {
			known["secret/"+secret] = true
		}
	}
	return err
}

package manifests

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"sync"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"github.com/kyma-project/kim-snatch/pkg/affinity"
	"github.com/kyma-project/kim-snatch/pkg/check"
	"github.com/kyma-project/kim-snatch/pkg/syncer"
	"github.com/kyma-project/kim-snatch/test/framework"
	"github.com/kyma-project/kim-snatch/test/framework/objects"
)

// Kustomizations under test, relative to the repository root.
const (
	webhookBase       = "deploy/webhook"
	syncerBase        = "deploy/syncer"
	defaultInstall    = "deploy/default"
	certManagerSample = "deploy/examples/cert-manager"
	migrationWebhook  = "deploy/migration/webhook"
)

// allKustomizations is every kustomization that deploy/ offers.
var allKustomizations = []string{webhookBase, syncerBase, defaultInstall, certManagerSample, migrationWebhook}

// Names from the contracts in docs/operations.md, as the binaries define
// them; the tests hold the manifests to them.
const (
	namespace            = syncer.DefaultNamespace
	secretName           = syncer.DefaultSecretName
	webhookConfiguration = syncer.DefaultWebhookConfiguration
	optOutLabel          = affinity.OptOutLabel
	managedByLabel       = check.ManagedByLabel
	syncerServiceAccount = "cabundle-syncer"
)

func TestMain(m *testing.M) {
	code := m.Run()
	if shared.cluster != nil {
		if err := shared.cluster.Stop(); err != nil {
			fmt.Fprintln(os.Stderr, "stop control plane:", err)
			code = 1
		}
	}
	os.Exit(code)
}

var renders sync.Map // kustomization dir -> renderResult

type renderResult struct {
	objs []*unstructured.Unstructured
	err  error
}

// render runs `kubectl kustomize` on dir and decodes the output. Each dir is
// rendered once per test binary; callers get deep copies.
func render(t testing.TB, dir string) []*unstructured.Unstructured {
	t.Helper()
	v, ok := renders.Load(dir)
	if !ok {
		objs, err := kustomize(dir)
		v, _ = renders.LoadOrStore(dir, renderResult{objs: objs, err: err})
	}
	r := v.(renderResult)
	if r.err != nil {
		t.Fatalf("render %s: %v", dir, r.err)
	}
	out := make([]*unstructured.Unstructured, len(r.objs))
	for i, o := range r.objs {
		out[i] = o.DeepCopy()
	}
	return out
}

func kustomize(dir string) ([]*unstructured.Unstructured, error) {
	out, err := framework.Kustomize(dir)
	if err != nil {
		return nil, err
	}
	return decodeYAML(out)
}

// decodeYAML splits a multi-document YAML stream into objects.
func decodeYAML(data []byte) ([]*unstructured.Unstructured, error) {
	return objects.Decode(data)
}

// readObjects decodes the objects of a YAML file, in its order.
func readObjects(t *testing.T, path string) []*unstructured.Unstructured {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	objs, err := decodeYAML(b)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return objs
}

// writeObjects writes objs as one YAML stream to a file name in a new
// directory, for the tools and scripts that read a manifest, and returns
// its path.
func writeObjects(t *testing.T, name string, objs []*unstructured.Unstructured) string {
	t.Helper()
	var b bytes.Buffer
	for _, o := range objs {
		data, err := yaml.Marshal(o.Object)
		if err != nil {
			t.Fatal(err)
		}
		b.WriteString("---\n")
		b.Write(data)
	}
	path := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(path, b.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// id names an object as Kind[.group]/namespace/name, or Kind[.group]/name
// for cluster-scoped objects; the group tells Gardener's Certificate from
// cert-manager's.
func id(o *unstructured.Unstructured) string {
	kind := o.GetKind()
	if g := o.GroupVersionKind().Group; g != "" {
		kind += "." + g
	}
	if o.GetNamespace() == "" {
		return kind + "/" + o.GetName()
	}
	return kind + "/" + o.GetNamespace() + "/" + o.GetName()
}

func ids(objs []*unstructured.Unstructured) []string {
	out := make([]string, 0, len(objs))
	for _, o := range objs {
		out = append(out, id(o))
	}
	sort.Strings(out)
	return out
}

// find returns the one object of kind and name in objs, failing t otherwise.
func find(t testing.TB, objs []*unstructured.Unstructured, kind, name string) *unstructured.Unstructured {
	t.Helper()
	var found []*unstructured.Unstructured
	for _, o := range objs {
		if o.GetKind() == kind && o.GetName() == name {
			found = append(found, o)
		}
	}
	if len(found) != 1 {
		t.Fatalf("want exactly one %s %q, found %d among %v", kind, name, len(found), ids(objs))
	}
	return found[0]
}

// typed converts o into into, rejecting fields the Go type does not know.
func typed(t testing.TB, o *unstructured.Unstructured, into any) {
	t.Helper()
	if err := objects.Into(o, into); err != nil {
		t.Fatalf("convert %s: %v", id(o), err)
	}
}

package manifests

import (
	"fmt"
	"maps"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/kyma-project/kim-snatch/test/framework/objects"
	"github.com/kyma-project/kim-snatch/test/tools"
)

// The tests of the bridge versions, which carry a runtime from kim-snatch's
// manifest to the module one lifecycle-manager step at a time
// (docs/releasing.md, "The bridge versions"): this file renders them and
// holds each to the design's table, module_bridge_steps_test.go holds what
// lifecycle-manager would prune between two consecutive versions,
// module_bridge_release_test.go their release and its refusals, and
// module_runtime_test.go applies them to a runtime.

// The names of the design, of kim-snatch's manifest and of the module.
const (
	bridgeModule       = "2.0.0"
	bridgeWebhook      = "v0.2.0"
	bridgeSyncer       = "v0.1.0"
	oldDeployment      = "kim-snatch-controller-manager"
	syncerDeployment   = "cabundle-syncer"
	webhookDeployment  = "snatch-webhook"
	oldService         = "kim-snatch-webhook-service"
	oldCertificate     = "kim-snatch-kyma"
	newCertificate     = "kim-snatch-webhook"
	oldEntry           = "mpod-v1.kb.io"
	newEntry           = "pods.kim-snatch.kyma-project.io"
	inertConditionName = "kim-snatch-bridge-inert"
	kimSnatchTestdata  = "test/e2e/kimsnatch/testdata/install.yaml"
)

// The ids (as id names them) the design names.
const (
	mwcID            = "MutatingWebhookConfiguration.admissionregistration.k8s.io/" + webhookConfiguration
	oldServiceID     = "Service/" + namespace + "/" + oldService
	oldCertificateID = "Certificate.cert.gardener.cloud/" + namespace + "/" + oldCertificate
	newCertificateID = "Certificate.cert.gardener.cloud/" + namespace + "/" + newCertificate
)

// oldBinary is what bridge-4 drops of kim-snatch's manifest: its
// Deployment, ServiceAccount and RBAC, by their names in the test's
// manifest.
var oldBinary = []string{
	"Deployment.apps/" + namespace + "/" + oldDeployment,
	"ServiceAccount/" + namespace + "/" + oldDeployment,
	"Role.rbac.authorization.k8s.io/" + namespace + "/kim-snatch-leader-election-role",
	"RoleBinding.rbac.authorization.k8s.io/" + namespace + "/kim-snatch-leader-election-rolebinding",
	"ClusterRole.rbac.authorization.k8s.io/kim-snatch-manager-role",
	"ClusterRoleBinding.rbac.authorization.k8s.io/kim-snatch-manager-rolebinding",
	"ClusterRole.rbac.authorization.k8s.io/kim-snatch-metrics-auth-role",
	"ClusterRoleBinding.rbac.authorization.k8s.io/kim-snatch-metrics-auth-rolebinding",
	"ClusterRole.rbac.authorization.k8s.io/kim-snatch-metrics-reader",
}

// The design's additions: the names C_old also carries from bridge-2, and
// the condition of the inert entry.
var (
	bridgeDNSNames = []any{"snatch-webhook." + namespace + ".svc", "snatch-webhook." + namespace + ".svc.cluster.local"}
	inertCondition = []any{map[string]any{"name": inertConditionName, "expression": "false"}}
)

// bridgeChain is what a runtime goes through: kim-snatch's manifest, the
// five bridge versions and the module, each as its manifest's objects in
// their order.
type bridgeChain struct {
	names     []string // kim-snatch, bridge-1 .. bridge-5, module
	versions  [][]*unstructured.Unstructured
	install   map[string][]*unstructured.Unstructured // binary -> its install.yaml
	kimSnatch []*unstructured.Unstructured
}

// bridge returns the objects of bridge-n.
func (c *bridgeChain) bridge(n int) []*unstructured.Unstructured { return c.versions[n] }

// module returns the objects of the module version.
func (c *bridgeChain) module() []*unstructured.Unstructured { return c.versions[len(c.versions)-1] }

// renderBridges makes the binary releases of the module in a clone and
// renders with hack/release/release.sh --module-manifests the module and its
// bridge versions from the kim-snatch manifest at path.
func renderBridges(t *testing.T, r *releaser, path string) *bridgeChain {
	t.Helper()
	dir := t.TempDir()
	if _, err := r.script(t, "--module-manifests", dir, bridgeModule, bridgeWebhook, bridgeSyncer, path); err != nil {
		t.Fatal(err)
	}
	c := &bridgeChain{
		names:     []string{"kim-snatch"},
		kimSnatch: readObjects(t, path),
		install:   map[string][]*unstructured.Unstructured{},
	}
	c.versions = append(c.versions, c.kimSnatch)
	for n := 1; n <= 5; n++ {
		name := fmt.Sprintf("bridge-%d", n)
		c.names = append(c.names, name)
		c.versions = append(c.versions, readObjects(t, filepath.Join(dir, name+".yaml")))
	}
	c.names = append(c.names, "module")
	c.versions = append(c.versions, readObjects(t, filepath.Join(dir, "module.yaml")))
	for b, v := range map[string]string{"snatch-webhook": bridgeWebhook, "cabundle-syncer": bridgeSyncer} {
		c.install[b] = readObjects(t, filepath.Join(r.repo, "dist", b, v, "install.yaml"))
	}
	return c
}

// bridgeReleaser is a clone with the two binary releases of the bridge
// versions.
func bridgeReleaser(t *testing.T) *releaser {
	t.Helper()
	r := newReleaser(t)
	r.binaryRelease(t, "snatch-webhook", bridgeWebhook, "sha256:"+strings.Repeat("ab", 32))
	r.binaryRelease(t, "cabundle-syncer", bridgeSyncer, "")
	return r
}

// kimSnatchManifest writes the test's kim-snatch manifest, as releases up to
// 1.0.9 ship it, changed by edit, and returns its path.
func kimSnatchManifest(t *testing.T, edit func([]*unstructured.Unstructured) []*unstructured.Unstructured) string {
	t.Helper()
	objs := edit(readObjects(t, filepath.Join(tools.MustRepoRoot(t), kimSnatchTestdata)))
	return writeObjects(t, "kim-snatch.yaml", objs)
}

// withoutCRDs is kim-snatch 1.0.16's manifest: the test's without the
// CustomResourceDefinitions.
func withoutCRDs(objs []*unstructured.Unstructured) []*unstructured.Unstructured {
	return without(objs, func(o *unstructured.Unstructured) bool { return o.GetKind() == "CustomResourceDefinition" })
}

// The bridge versions, rendered from kim-snatch's manifest as 1.0.16 ships
// it and as releases up to 1.0.9 do, with two CRDs, hold what the design's
// table says of each: the objects, the one MutatingWebhookConfiguration
// and its entries, the old Service's selector, the old Certificate's
// names, the first Deployment, the webhook only where the certificate it
// serves names its Service, and nothing else changed.
func TestModuleBridgeVersionsAreTheDesignsSteps(t *testing.T) {
	r := bridgeReleaser(t)
	for _, m := range []struct{ name, path string }{
		{"kim-snatch_1.0.16_gives_the_designs_steps", kimSnatchManifest(t, withoutCRDs)},
		{"kim-snatch_up_to_1.0.9_with_crds_gives_the_designs_steps", filepath.Join(tools.MustRepoRoot(t), kimSnatchTestdata)},
	} {
		c := renderBridges(t, r, m.path)
		t.Run(m.name, func(t *testing.T) {
			for n := 1; n <= 5; n++ {
				t.Run(c.names[n], func(t *testing.T) {
					checkBridgeObjects(t, c, n)
					checkBridgeWebhookConfiguration(t, c, n)
					checkBridgeOldService(t, c, n)
					checkBridgeOldCertificate(t, c, n)
					checkBridgeFirstDeployment(t, c, n)
					checkBridgeWebhookCertificateNamesIt(t, c, n)
					checkBridgeUnchangedElse(t, c, n)
				})
			}
		})
	}
}

// wantBridgeIDs is the design's set of objects of bridge-n: kim-snatch's
// and cabundle-syncer's module part; from bridge-2 snatch-webhook's too,
// but its Certificate, and its MutatingWebhookConfiguration, whose name is
// kim-snatch's; without kim-snatch's binary from bridge-4.
func wantBridgeIDs(c *bridgeChain, n int) []string {
	want := ids(c.kimSnatch)
	for _, b := range moduleBinaries {
		if b == "snatch-webhook" && n < 2 {
			continue
		}
		for _, o := range without(c.install[b], isMonitoring) {
			if i := id(o); i != newCertificateID && i != mwcID {
				want = append(want, i)
			}
		}
	}
	if n >= 4 {
		want = slices.DeleteFunc(want, func(i string) bool { return slices.Contains(oldBinary, i) })
	}
	slices.Sort(want)
	return want
}

func checkBridgeObjects(t *testing.T, c *bridgeChain, n int) {
	b := c.bridge(n)
	if got, want := ids(b), wantBridgeIDs(c, n); !slices.Equal(got, want) {
		t.Errorf("%s holds\n  %v\nwant\n  %v", c.names[n], got, want)
	}
	for _, o := range b {
		if isMonitoring(o) {
			t.Errorf("%s holds %s, whose CRD a plain runtime lacks", c.names[n], id(o))
		}
		if got, want := o.GetAnnotations()[moduleAnnotation], bridgeModule+"-"+c.names[n]; got != want {
			t.Errorf("%s: %s has %s=%q, want %q", c.names[n], id(o), moduleAnnotation, got, want)
		}
	}
}

// entries returns the webhooks of the one MutatingWebhookConfiguration of
// objs, by name, failing t unless there is exactly one.
func entries(t *testing.T, objs []*unstructured.Unstructured) (map[string]map[string]any, []string) {
	t.Helper()
	if n := len(objects.OfKind(objs, "MutatingWebhookConfiguration")); n != 1 {
		t.Fatalf("%d MutatingWebhookConfigurations, want one", n)
	}
	mwc := find(t, objs, "MutatingWebhookConfiguration", webhookConfiguration)
	hooks, _, _ := unstructured.NestedSlice(mwc.Object, "webhooks")
	out := map[string]map[string]any{}
	var names []string
	for _, h := range hooks {
		m := h.(map[string]any)
		out[m["name"].(string)] = m
		names = append(names, m["name"].(string))
	}
	return out, names
}

// inert tells an entry the API server never calls: one of its
// matchConditions is the constant false.
func inert(entry map[string]any) bool {
	conds, _, _ := unstructured.NestedSlice(entry, "matchConditions")
	return slices.ContainsFunc(conds, func(c any) bool { return c.(map[string]any)["expression"] == "false" })
}

// checkBridgeWebhookConfiguration: one configuration; kim-snatch's as it
// is up to bridge-3, then snatch-webhook's with kim-snatch's entry beside
// its own, each as its source has it, the one inert.
func checkBridgeWebhookConfiguration(t *testing.T, c *bridgeChain, n int) {
	got, names := entries(t, c.bridge(n))
	if n <= 3 {
		mwc, old := find(t, c.bridge(n), "MutatingWebhookConfiguration", webhookConfiguration),
			find(t, c.kimSnatch, "MutatingWebhookConfiguration", webhookConfiguration)
		if !equalObjects(withoutAnnotation(mwc, moduleAnnotation), old) {
			t.Errorf("%s's MutatingWebhookConfiguration is not kim-snatch's:\n got %v\nwant %v",
				c.names[n], mwc.Object, old.Object)
		}
		return
	}
	if !slices.Equal(names, []string{newEntry, oldEntry}) {
		t.Fatalf("%s's entries are %v, want %s and %s", c.names[n], names, newEntry, oldEntry)
	}
	oldEntries, _ := entries(t, c.kimSnatch)
	newEntries, _ := entries(t, c.install["snatch-webhook"])
	want := map[string]map[string]any{oldEntry: oldEntries[oldEntry], newEntry: newEntries[newEntry]}
	inertOne := map[int]string{4: newEntry, 5: oldEntry}[n]
	for name, e := range got {
		e = runtime.DeepCopyJSON(e)
		if name == inertOne {
			if conds, _, _ := unstructured.NestedSlice(e, "matchConditions"); !equalValues(conds, inertCondition) {
				t.Errorf("%s: %s has matchConditions %v, want %v", c.names[n], name, conds, inertCondition)
			}
			delete(e, "matchConditions")
		} else if inert(e) {
			t.Errorf("%s: %s is inert, want it active", c.names[n], name)
		}
		if !equalValues(e, want[name]) {
			t.Errorf("%s: the entry %s is not its source's:\n got %v\nwant %v", c.names[n], name, e, want[name])
		}
	}
	configuration := func(objs []*unstructured.Unstructured) *unstructured.Unstructured {
		return withoutAnnotation(find(t, objs, "MutatingWebhookConfiguration", webhookConfiguration), moduleAnnotation)
	}
	mwc, released := configuration(c.bridge(n)), configuration(c.module())
	unstructured.RemoveNestedField(mwc.Object, "webhooks")
	unstructured.RemoveNestedField(released.Object, "webhooks")
	if !equalObjects(mwc, released) {
		t.Errorf("%s's MutatingWebhookConfiguration is not the module's but for its entries:\n got %v\nwant %v",
			c.names[n], mwc.Object, released.Object)
	}
}

// checkBridgeOldService: the old Service selects kim-snatch's Pods in
// bridge-1 and bridge-2 and snatch-webhook's from bridge-3.
func checkBridgeOldService(t *testing.T, c *bridgeChain, n int) {
	got, _, _ := unstructured.NestedStringMap(find(t, c.bridge(n), "Service", oldService).Object, "spec", "selector")
	want := map[string]string{"app.kubernetes.io/name": "snatch-webhook"}
	if n <= 2 {
		want, _, _ = unstructured.NestedStringMap(find(t, c.kimSnatch, "Service", oldService).Object, "spec", "selector")
	}
	if !equalValues(got, want) {
		t.Errorf("%s: %s selects %v, want %v", c.names[n], oldService, got, want)
	}
}

// checkBridgeOldCertificate: the old Certificate names the old Service
// alone in bridge-1, and snatch-webhook's too from bridge-2, as
// snatch-webhook's release names it.
func checkBridgeOldCertificate(t *testing.T, c *bridgeChain, n int) {
	got, _, _ := unstructured.NestedSlice(find(t, c.bridge(n), "Certificate", oldCertificate).Object, "spec", "dnsNames")
	want, _, _ := unstructured.NestedSlice(find(t, c.kimSnatch, "Certificate", oldCertificate).Object, "spec", "dnsNames")
	if n >= 2 {
		want = append(want, bridgeDNSNames...)
		cert := find(t, c.install["snatch-webhook"], "Certificate", newCertificate)
		released, _, _ := unstructured.NestedSlice(cert.Object, "spec", "dnsNames")
		if !equalValues(released, bridgeDNSNames) {
			t.Errorf("snatch-webhook's release names %v, not the design's %v: the check below proves another thing",
				released, bridgeDNSNames)
		}
	}
	if !equalValues(got, want) {
		t.Errorf("%s: %s names %v, want %v", c.names[n], oldCertificate, got, want)
	}
}

// checkBridgeFirstDeployment: lifecycle-manager reads the state of a
// version from its first Deployment: cabundle-syncer's in bridge-1,
// kim-snatch's in bridge-3, snatch-webhook's in the others.
func checkBridgeFirstDeployment(t *testing.T, c *bridgeChain, n int) {
	want := map[int]string{1: syncerDeployment, 2: webhookDeployment, 3: oldDeployment, 4: webhookDeployment,
		5: webhookDeployment}[n]
	for _, o := range c.bridge(n) {
		if g := o.GroupVersionKind(); g.Group == "apps" && (g.Kind == "Deployment" || g.Kind == "StatefulSet") {
			if g.Kind != "Deployment" || o.GetName() != want {
				t.Errorf("%s's first Deployment or StatefulSet is %s, want Deployment %s", c.names[n], id(o), want)
			}
			return
		}
	}
	t.Errorf("%s has no Deployment", c.names[n])
}

// checkBridgeWebhookCertificateNamesIt: snatch-webhook serves only a
// certificate that names its own Service, so in a version that runs it a
// Certificate writes the Secret its Pods mount, and every such Certificate
// names snatch-webhook's Service.
func checkBridgeWebhookCertificateNamesIt(t *testing.T, c *bridgeChain, n int) {
	d := findIn(c.bridge(n), "Deployment", namespace, webhookDeployment)
	if d == nil {
		return
	}
	volumes, _, _ := unstructured.NestedSlice(d.Object, "spec", "template", "spec", "volumes")
	secrets := map[string]bool{}
	for _, v := range volumes {
		if name, ok, _ := unstructured.NestedString(v.(map[string]any), "secret", "secretName"); ok {
			secrets[name] = true
		}
	}
	var writers int
	for _, cert := range objects.OfKind(c.bridge(n), "Certificate") {
		if secret, _, _ := unstructured.NestedString(cert.Object, "spec", "secretRef", "name"); !secrets[secret] {
			continue
		}
		writers++
		names, _, _ := unstructured.NestedStringSlice(cert.Object, "spec", "dnsNames")
		if !slices.Contains(names, bridgeDNSNames[0].(string)) {
			t.Errorf("%s runs %s, but %s writes its Secret with the names %v, without %s",
				c.names[n], webhookDeployment, id(cert), names, bridgeDNSNames[0])
		}
	}
	if writers == 0 {
		t.Errorf("%s runs %s, but no Certificate writes the Secrets %v it mounts", c.names[n], webhookDeployment,
			slices.Sorted(maps.Keys(secrets)))
	}
}

// checkBridgeUnchangedElse: every other object of bridge-n is its source's
// but for the module annotation: kim-snatch's as its manifest has it, the
// binaries' as the module has them.
func checkBridgeUnchangedElse(t *testing.T, c *bridgeChain, n int) {
	source := map[string]*unstructured.Unstructured{}
	for _, o := range c.kimSnatch {
		source[id(o)] = o
	}
	for _, o := range c.module() {
		source[id(o)] = withoutAnnotation(o, moduleAnnotation)
	}
	changed := map[string]bool{mwcID: true, oldServiceID: n >= 3, oldCertificateID: n >= 2}
	for _, o := range c.bridge(n) {
		o = withoutAnnotation(o, moduleAnnotation)
		if i := id(o); changed[i] {
			continue
		} else if !equalObjects(o, source[i]) {
			t.Errorf("%s: %s is not its source's:\n got %v\nwant %v", c.names[n], i, o.Object, source[i])
		}
	}
	if n < 2 {
		return
	}
	// Beyond what the other checks hold, the changed objects are their
	// sources'.
	for _, changed := range []struct{ kind, name, field string }{
		{"Service", oldService, "selector"},
		{"Certificate", oldCertificate, "dnsNames"},
	} {
		got := withoutAnnotation(find(t, c.bridge(n), changed.kind, changed.name), moduleAnnotation)
		want := find(t, c.kimSnatch, changed.kind, changed.name).DeepCopy()
		unstructured.RemoveNestedField(got.Object, "spec", changed.field)
		unstructured.RemoveNestedField(want.Object, "spec", changed.field)
		if !equalObjects(got, want) {
			t.Errorf("%s: %s differs from kim-snatch's beyond its %s:\n got %v\nwant %v", c.names[n], changed.name,
				changed.field, got.Object, want.Object)
		}
	}
}

// equalObjects tells whether two objects are the same, field by field.
func equalObjects(a, b *unstructured.Unstructured) bool {
	return a != nil && b != nil && reflect.DeepEqual(a.Object, b.Object)
}

// equalValues tells whether two decoded values are the same.
func equalValues(a, b any) bool { return reflect.DeepEqual(a, b) }

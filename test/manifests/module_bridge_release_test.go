package manifests

import (
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kyma-project/kim-snatch/test/supplychain"
)

// hack/release/release.sh --module <M>-bridge-<N> with KIM_SNATCH_MANIFEST releases
// a bridge version as any module version: its module.yaml the one
// --module-manifests renders, kim-snatch's manifest beside it, SHA256SUMS
// of all three files and the monitoring, signed with the release key, and
// notes that name the step and the manifest's sha256.
func TestModuleBridgeReleaseIsSignedAndNamesKimSnatchsManifest(t *testing.T) {
	r := bridgeReleaser(t)
	manifest := kimSnatchManifest(t, withoutCRDs)
	c := renderBridges(t, r, manifest)
	version := bridgeModule + "-bridge-4"
	if res, err := r.script(t, "--check", "--module", version, bridgeWebhook, bridgeSyncer); err == nil ||
		!strings.Contains(res.Stderr, "set KIM_SNATCH_MANIFEST") {
		t.Fatalf("--check --module %s without KIM_SNATCH_MANIFEST: %s\nwant a refusal", version, res)
	}
	r.env = append(r.env, "KIM_SNATCH_MANIFEST="+manifest)
	if _, err := r.script(t, "--check", "--module", version, bridgeWebhook, bridgeSyncer); err != nil {
		t.Fatal(err)
	}
	if _, err := r.module(t, version, bridgeWebhook, bridgeSyncer); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(r.repo, "dist", moduleName, version)
	if got, want := readObjects(t, filepath.Join(dir, "module.yaml")), c.bridge(4); !slices.EqualFunc(got, want,
		func(a, b *unstructured.Unstructured) bool { return equalObjects(a, b) }) {
		t.Errorf("the release's module.yaml is not bridge-4 as --module-manifests renders it:\n got %v\nwant %v",
			ids(got), ids(want))
	}
	sums := assertReleaseSums(t, dir, []string{"module.yaml", "monitoring.yaml", "kim-snatch-manifest.yaml"})
	b, err := os.ReadFile(manifest)
	if err != nil {
		t.Fatal(err)
	}
	h := sha256.Sum256(b)
	if sum := hex.EncodeToString(h[:]); sums["kim-snatch-manifest.yaml"] != sum {
		t.Errorf("SHA256SUMS lists %s for kim-snatch-manifest.yaml, want the sum of KIM_SNATCH_MANIFEST, %s",
			sums["kim-snatch-manifest.yaml"], sum)
	}
	assertBlobSignatures(t, dir, filepath.Join(r.repo, supplychain.TrustedKeyFile), []string{"SHA256SUMS"})
	notes := readFile(t, filepath.Join(dir, "RELEASE_NOTES.md"))
	for _, want := range []string{"bridge-4", hex.EncodeToString(h[:]), "Through lifecycle-manager"} {
		if !strings.Contains(notes, want) {
			t.Errorf("RELEASE_NOTES.md does not name %q:\n%s", want, notes)
		}
	}
}

// hack/release/release.sh refuses a bridge version without kim-snatch's manifest,
// of a step outside 1 to 5, from a manifest that lacks an object the steps
// change, and kim-snatch's manifest for a version that is not a bridge;
// with and without --check, and writes nothing to dist/kim-snatch/ then.
func TestModuleBridgeReleaseRefusesBadInputWithoutWritingDist(t *testing.T) {
	r := bridgeReleaser(t)
	good := kimSnatchManifest(t, withoutCRDs)
	lacking := func(kind, name string) string {
		return kimSnatchManifest(t, func(objs []*unstructured.Unstructured) []*unstructured.Unstructured {
			return without(withoutCRDs(objs), func(o *unstructured.Unstructured) bool {
				return o.GetKind() == kind && o.GetName() == name
			})
		})
	}
	otherEntry := kimSnatchManifest(t, func(objs []*unstructured.Unstructured) []*unstructured.Unstructured {
		mwc := find(t, objs, "MutatingWebhookConfiguration", webhookConfiguration)
		hooks, _, _ := unstructured.NestedSlice(mwc.Object, "webhooks")
		hooks[0].(map[string]any)["name"] = "other.kb.io"
		if err := unstructured.SetNestedSlice(mwc.Object, hooks, "webhooks"); err != nil {
			t.Fatal(err)
		}
		return objs
	})
	const lacks = "lacks what the bridge versions change"
	for _, tt := range []struct {
		name, version, manifest, want string
	}{
		{"no_kim_snatch_manifest_is_refused", "2.0.0-bridge-1", "", "set KIM_SNATCH_MANIFEST"},
		{"kim_snatch_manifest_missing_is_refused", "2.0.0-bridge-1", filepath.Join(t.TempDir(), "none.yaml"), "is not a file"},
		{"step_0_is_refused", "2.0.0-bridge-0", good, "of a step 1 to 5"},
		{"step_6_is_refused", "2.0.0-bridge-6", good, "of a step 1 to 5"},
		{"step_not_a_number_is_refused", "2.0.0-bridge-x", good, "of a step 1 to 5"},
		{"no_step_is_refused", "2.0.0-bridge", good, "of a step 1 to 5"},
		{"kim_snatch_manifest_for_the_module_is_refused", "2.0.0", good, "is not a bridge version"},
		{"without_the_old_deployment_is_refused", "2.0.0-bridge-3", lacking("Deployment", oldDeployment), lacks},
		{"without_the_old_service_is_refused", "2.0.0-bridge-2", lacking("Service", oldService), lacks},
		{"without_the_old_certificate_is_refused", "2.0.0-bridge-4", lacking("Certificate", oldCertificate), lacks},
		{"without_the_configuration_is_refused", "2.0.0-bridge-4", lacking("MutatingWebhookConfiguration", webhookConfiguration),
			lacks},
		{"without_the_old_entry_is_refused", "2.0.0-bridge-5", otherEntry, lacks},
	} {
		t.Run(tt.name, func(t *testing.T) {
			env := r.env
			defer func() { r.env = env }()
			r.env = append(slices.Clone(env), "KIM_SNATCH_MANIFEST="+tt.manifest)
			for _, args := range [][]string{{"--module"}, {"--check", "--module"}} {
				args = append(args, tt.version, bridgeWebhook, bridgeSyncer)
				res, err := r.script(t, args...)
				if err == nil || !strings.Contains(res.Stderr, tt.want) {
					t.Errorf("%v: %s\nwant a failure saying %q", args, res, tt.want)
				}
			}
			if _, err := os.Stat(filepath.Join(r.repo, "dist", moduleName, tt.version)); err == nil {
				t.Errorf("a refused release wrote dist/%s/%s", moduleName, tt.version)
			}
		})
	}
}

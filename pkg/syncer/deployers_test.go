package syncer

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	"github.com/kyma-project/kim-snatch/pkg/certtest"
	"github.com/kyma-project/kim-snatch/pkg/syncer/syncertest"
	"github.com/kyma-project/kim-snatch/test/e2e/stack"
	"github.com/kyma-project/kim-snatch/test/framework"
	"github.com/kyma-project/kim-snatch/test/framework/poll"
)

// The tests in this file hold the syncer to its promise that it never
// blocks another field manager's writes: each of the three ways to deploy
// the MutatingWebhookConfiguration of deploy/webhook, run against the real
// API server next to a running syncer, through the changes a release of
// the manifests makes.

// deployer writes the manifest of the MutatingWebhookConfiguration as one
// kind of tool does, and returns the object as that write left it: the
// caBundle it shows is the API server's answer to the deploy, before the
// syncer could have written anything.
type deployer struct {
	name string
	// deploy creates or updates the object from manifest; dryRun asks the
	// API server to validate without persisting.
	deploy func(t *testing.T, h *harness, manifest *admissionregistrationv1.MutatingWebhookConfiguration, dryRun bool) (*admissionregistrationv1.MutatingWebhookConfiguration, error)
	// keepsCABundle: a deploy of a manifest without caBundle leaves the
	// caBundle of an entry that stays as it is. Only replacing the whole
	// object blanks it.
	keepsCABundle bool
	// blockedByOldApplyEntry: the server-side apply entry that the syncer
	// wrote before this release refuses this deployer's rename. Client-side
	// tools write with Update, which ownership never refuses.
	blockedByOldApplyEntry bool
}

// deployerFieldManager stands for a server-side deployer such as
// lifecycle-manager, Flux or `kubectl apply --server-side`.
const deployerFieldManager = "deployer"

func deployers() []deployer {
	ssa := func(force bool) func(*testing.T, *harness, *admissionregistrationv1.MutatingWebhookConfiguration, bool) (*admissionregistrationv1.MutatingWebhookConfiguration, error) {
		return func(t *testing.T, h *harness, manifest *admissionregistrationv1.MutatingWebhookConfiguration, dryRun bool) (*admissionregistrationv1.MutatingWebhookConfiguration, error) {
			opts := metav1.PatchOptions{FieldManager: deployerFieldManager, Force: ptr.To(force)}
			if dryRun {
				opts.DryRun = []string{metav1.DryRunAll}
			}
			return h.cluster.Clientset.AdmissionregistrationV1().MutatingWebhookConfigurations().
				Patch(context.Background(), manifest.Name, types.ApplyPatchType, manifestJSON(t, manifest), opts)
		}
	}
	return []deployer{
		{name: "server_side_apply", deploy: ssa(false), keepsCABundle: true, blockedByOldApplyEntry: true},
		{name: "server_side_apply_force", deploy: ssa(true), keepsCABundle: true, blockedByOldApplyEntry: true},
		{
			// kubectl apply without --server-side: a three-way strategic
			// merge patch from the last-applied annotation, the manifest and
			// the object in place.
			name: "kubectl_apply",
			deploy: func(t *testing.T, h *harness, manifest *admissionregistrationv1.MutatingWebhookConfiguration, dryRun bool) (*admissionregistrationv1.MutatingWebhookConfiguration, error) {
				args := []string{"apply", "-f", writeManifest(t, manifest)}
				if dryRun {
					args = append(args, "--dry-run=server")
				}
				return kubectl(t, h, args...)
			},
			keepsCABundle: true,
		},
		{
			// kubectl replace: an Update of the whole object from the
			// manifest (kubectl create while there is none).
			name: "kubectl_replace",
			deploy: func(t *testing.T, h *harness, manifest *admissionregistrationv1.MutatingWebhookConfiguration, dryRun bool) (*admissionregistrationv1.MutatingWebhookConfiguration, error) {
				verb := "replace"
				if _, err := h.cluster.Clientset.AdmissionregistrationV1().MutatingWebhookConfigurations().Get(context.Background(), manifest.Name, metav1.GetOptions{}); apierrors.IsNotFound(err) {
					verb = "create"
				}
				args := []string{verb, "-f", writeManifest(t, manifest)}
				if dryRun {
					args = append(args, "--dry-run=server")
				}
				return kubectl(t, h, args...)
			},
		},
	}
}

// kubectl runs the kubectl binary of the control plane against the test
// cluster and decodes the object it prints.
func kubectl(t *testing.T, h *harness, args ...string) (*admissionregistrationv1.MutatingWebhookConfiguration, error) {
	t.Helper()
	out, err := framework.RunKubectl(t.Context(), framework.KubectlOptions{Kubeconfig: h.cluster.KubeconfigPath}, append([]string{"-o", "json"}, args...)...)
	if err != nil {
		return nil, err
	}
	mwc := &admissionregistrationv1.MutatingWebhookConfiguration{}
	if err := json.Unmarshal([]byte(out), mwc); err != nil {
		t.Fatalf("kubectl %v printed %q: %v", args, out, err)
	}
	return mwc, nil
}

var rendered struct {
	once sync.Once
	mwc  *admissionregistrationv1.MutatingWebhookConfiguration
	err  error
}

// shippedManifest is the MutatingWebhookConfiguration of deploy/webhook as
// kustomize renders it, renamed to the test's object. Its entry calls the
// Service kyma-system/snatch-webhook, which does not exist here, and only
// for Pods in namespaces of Kyma, which no test of this package creates.
func shippedManifest(t *testing.T, name string) *admissionregistrationv1.MutatingWebhookConfiguration {
	t.Helper()
	rendered.once.Do(func() { rendered.mwc, rendered.err = stack.RenderWebhookConfiguration() })
	if rendered.err != nil {
		t.Fatal(rendered.err)
	}
	if len(rendered.mwc.Webhooks) != 1 {
		t.Fatalf("deploy/webhook has %d webhook entries; these tests start from one", len(rendered.mwc.Webhooks))
	}
	for _, wh := range rendered.mwc.Webhooks {
		if len(wh.ClientConfig.CABundle) != 0 {
			t.Fatalf("deploy/webhook sets the caBundle of %s; it is the syncer's", wh.Name)
		}
	}
	m := rendered.mwc.DeepCopy()
	m.Name = name
	return m
}

// manifestJSON is the manifest as a file holds it: only the fields it sets.
func manifestJSON(t *testing.T, m *admissionregistrationv1.MutatingWebhookConfiguration) []byte {
	t.Helper()
	u, err := runtime.DefaultUnstructuredConverter.ToUnstructured(m)
	if err != nil {
		t.Fatal(err)
	}
	// The typed object's zero creationTimestamp is not part of any manifest.
	if meta, ok := u["metadata"].(map[string]any); ok {
		delete(meta, "creationTimestamp")
	}
	data, err := json.Marshal(u)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

func writeManifest(t *testing.T, m *admissionregistrationv1.MutatingWebhookConfiguration) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "mutatingwebhookconfiguration.json")
	if err := os.WriteFile(path, manifestJSON(t, m), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// Manifest changes of a release.
func withEntry(name string) func(*admissionregistrationv1.MutatingWebhookConfiguration) {
	return func(m *admissionregistrationv1.MutatingWebhookConfiguration) {
		wh := *m.Webhooks[0].DeepCopy()
		wh.Name = name
		m.Webhooks = append(m.Webhooks, wh)
	}
}

func renamedTo(name string) func(*admissionregistrationv1.MutatingWebhookConfiguration) {
	return func(m *admissionregistrationv1.MutatingWebhookConfiguration) { m.Webhooks[0].Name = name }
}

func unchanged(*admissionregistrationv1.MutatingWebhookConfiguration) {}

func names(mwc *admissionregistrationv1.MutatingWebhookConfiguration) []string {
	out := make([]string, 0, len(mwc.Webhooks))
	for _, wh := range mwc.Webhooks {
		out = append(out, wh.Name)
	}
	return out
}

// deployCase is two deploys of the shipped manifest, the syncer running
// between them.
type deployCase struct {
	name string
	// first is the change to the shipped manifest of the first deploy,
	// next the one of the deploy under test.
	first, next func(*admissionregistrationv1.MutatingWebhookConfiguration)
	// recreate deletes the object before the deploy under test.
	recreate bool
	// oldSyncer: before the syncer starts, the syncer of the previous
	// release has written the caBundle and its state with server-side
	// apply.
	oldSyncer bool
}

// Every deployer can add, rename and remove entries of the configuration
// the syncer writes to, and the syncer fills what the deploy left empty.
func TestDeployersAreNeverBlocked(t *testing.T) {
	const (
		extra   = "extra.kim-snatch.kyma-project.io"
		renamed = "renamed.kim-snatch.kyma-project.io"
	)
	tests := []deployCase{
		{name: "reapply_unchanged_is_accepted", first: unchanged, next: unchanged},
		{name: "add_entry_is_accepted", first: unchanged, next: withEntry(extra)},
		{name: "rename_entry_is_accepted", first: unchanged, next: renamedTo(renamed)},
		{name: "remove_entry_is_accepted", first: withEntry(extra), next: unchanged},
		{name: "change_path_and_timeout_is_accepted", first: unchanged, next: func(m *admissionregistrationv1.MutatingWebhookConfiguration) {
			m.Webhooks[0].ClientConfig.Service.Path = ptr.To("/mutate-pod-v2")
			m.Webhooks[0].TimeoutSeconds = ptr.To[int32](5)
		}},
		{name: "delete_and_recreate_is_accepted", first: unchanged, next: unchanged, recreate: true},
		{name: "upgrade_from_server_side_apply_syncer_is_accepted", first: withEntry(extra), next: renamedTo(renamed), oldSyncer: true},
	}
	for _, d := range deployers() {
		t.Run(d.name, func(t *testing.T) {
			for _, tt := range tests {
				t.Run(tt.name, func(t *testing.T) { deployTwice(t, d, tt) })
			}
		})
	}
}

// deployTwice deploys tt's first manifest, lets the syncer write the
// caBundle, deploys the next one and holds both the deploy and the syncer
// to what each may do.
func deployTwice(t *testing.T, d deployer, tt deployCase) {
	ctx := context.Background()
	h := newEmptyHarness(t, time.Hour)
	ca := certtest.MustCA(t, certtest.Options{CommonName: "ca"})
	h.putCA(ctx, ca.CertPEM)

	first := shippedManifest(t, h.cfg.WebhookConfiguration)
	tt.first(first)
	if _, err := d.deploy(t, h, first, false); err != nil {
		t.Fatalf("first deploy: %v", err)
	}
	next := shippedManifest(t, h.cfg.WebhookConfiguration)
	tt.next(next)

	if tt.oldSyncer {
		upgradeFromOldSyncer(ctx, t, h, d, ca, next)
	} else {
		h.start()
	}
	h.waitMWC(ctx, "the caBundle after the first deploy", func(m *admissionregistrationv1.MutatingWebhookConfiguration) bool {
		return syncertest.EveryBundleIs(m, ca.Fingerprint())
	})
	before := h.mwc(ctx)

	if tt.recreate {
		if err := h.cluster.Clientset.AdmissionregistrationV1().MutatingWebhookConfigurations().Delete(ctx, h.cfg.WebhookConfiguration, metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	got, err := d.deploy(t, h, next, false)
	if err != nil {
		t.Fatalf("the deploy was refused: %v", err)
	}
	if !slices.Equal(names(got), names(next)) {
		t.Fatalf("after the deploy the entries are %v, want the manifest's %v", names(got), names(next))
	}
	blanked := assertDeployKeptCABundle(t, d, tt, before, got, ca)
	assertSyncerFillsTheRest(ctx, t, h, d, got, next, ca, len(blanked) == 0)
}

// assertDeployKeptCABundle checks what the deploy itself did to the
// caBundle of each entry: an entry that existed before keeps it exactly
// when d keeps it. It returns the entries the deploy left empty.
func assertDeployKeptCABundle(t *testing.T, d deployer, tt deployCase, before, got *admissionregistrationv1.MutatingWebhookConfiguration, ca *certtest.Cert) []string {
	t.Helper()
	var kept, blanked []string
	for _, wh := range got.Webhooks {
		stayed := !tt.recreate && slices.Contains(names(before), wh.Name)
		has := slices.Equal(certtest.Fingerprints(wh.ClientConfig.CABundle), []string{ca.Fingerprint()})
		switch {
		case has:
			kept = append(kept, wh.Name)
		case len(wh.ClientConfig.CABundle) == 0:
			blanked = append(blanked, wh.Name)
		default:
			t.Errorf("entry %s: the deploy left a caBundle that is neither the CA nor empty", wh.Name)
		}
		if wantKept := stayed && d.keepsCABundle; has != wantKept {
			t.Errorf("entry %s (existed before: %v): caBundle kept by the deploy = %v, want %v", wh.Name, stayed, has, wantKept)
		}
	}
	t.Logf("%s %s: caBundle kept by the deploy in %v, left empty in %v", d.name, tt.name, kept, blanked)
	return blanked
}

// assertSyncerFillsTheRest waits until the syncer has filled what the
// deploy left empty, writing nothing when nothing was (nothingBlank), and
// owning only the caBundle; the deployer can then deploy again.
func assertSyncerFillsTheRest(ctx context.Context, t *testing.T, h *harness, d deployer, got, next *admissionregistrationv1.MutatingWebhookConfiguration, ca *certtest.Cert, nothingBlank bool) {
	t.Helper()
	after, _ := h.waitMWC(ctx, "every entry of the deployed manifest with the caBundle", func(m *admissionregistrationv1.MutatingWebhookConfiguration) bool {
		return slices.Equal(names(m), names(next)) && syncertest.EveryBundleIs(m, ca.Fingerprint())
	})
	if nothingBlank && after.ResourceVersion != got.ResourceVersion {
		// Nothing to fill: the syncer must not have written.
		t.Errorf("nothing was left empty, yet the object was written after the deploy: resourceVersion %s -> %s", got.ResourceVersion, after.ResourceVersion)
	}
	assertOwnsOnlyCABundle(t, after, names(next))
	if hasOldApplyEntry(after) {
		t.Error("the old server-side apply entry of the syncer is still there")
	}
	// The deployer can keep deploying: the same manifest again is accepted.
	if _, err := d.deploy(t, h, next, true); err != nil {
		t.Errorf("deploying the manifest once more (dry run) was refused: %v", err)
	}
	h.running()
}

// upgradeFromOldSyncer brings the object into the state the previous
// release's syncer left it in, shows that this state refuses the deployer
// where it should, then starts the syncer and waits until it has released
// the old entry.
func upgradeFromOldSyncer(ctx context.Context, t *testing.T, h *harness, d deployer, ca *certtest.Cert, next *admissionregistrationv1.MutatingWebhookConfiguration) {
	t.Helper()
	// The unversioned (v0) state the old syncer wrote.
	firstSeen := time.Now().UTC().Add(-24 * time.Hour).Truncate(time.Second)
	v0 := fmt.Sprintf(`{%q:{"firstSeen":%q}}`, ca.Fingerprint(), firstSeen.Format(time.RFC3339))
	applyAsOldSyncer(ctx, t, h, ca.CertPEM, v0)

	_, err := d.deploy(t, h, next, true)
	switch {
	case d.blockedByOldApplyEntry && err == nil:
		t.Fatal("the old syncer's apply entry did not refuse the deploy (dry run); the test does not reproduce the defect")
	case !d.blockedByOldApplyEntry && err != nil:
		t.Fatalf("the deploy (dry run) was refused before the syncer started: %v", err)
	}
	t.Logf("%s, before the syncer released the old entry: %v", d.name, err)

	h.start()
	poll.Eventually(t, "the syncer to release the old server-side apply entry", func(context.Context) error {
		if hasOldApplyEntry(h.mwc(ctx)) {
			return errors.New("the old entry is still in managedFields")
		}
		return nil
	})
	// The syncer read the old state and keeps it, in the current format.
	mwc, _ := h.waitMWC(ctx, "the state in the current format", func(m *admissionregistrationv1.MutatingWebhookConfiguration) bool {
		var doc stateDocument
		return json.Unmarshal([]byte(m.Annotations[StateAnnotation]), &doc) == nil && doc.Version == StateFormatVersion
	})
	if rec := h.state(mwc)[ca.Fingerprint()]; !rec.FirstSeen.Equal(firstSeen) {
		t.Errorf("firstSeen after the upgrade = %s, want %s from the old state", rec.FirstSeen, firstSeen)
	}
}

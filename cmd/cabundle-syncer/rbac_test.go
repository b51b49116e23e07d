package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kyma-project/kim-snatch/pkg/certtest"
	"github.com/kyma-project/kim-snatch/pkg/syncer"
	"github.com/kyma-project/kim-snatch/pkg/syncer/syncertest"
	"github.com/kyma-project/kim-snatch/test/framework"
	"github.com/kyma-project/kim-snatch/test/framework/objects"
	"github.com/kyma-project/kim-snatch/test/framework/poll"
	"github.com/kyma-project/kim-snatch/test/tools"
)

// applyRBAC creates, as the cluster admin, every object of
// deploy/syncer/rbac.yaml, the identity the Deployment uses, and the Lease of
// lease.yaml, which that identity may update but not create.
func applyRBAC(t *testing.T, c *framework.Cluster) {
	t.Helper()
	kinds := applyManifests(t, c, "rbac.yaml", "lease.yaml")
	for _, k := range []string{"ServiceAccount", "Role", "RoleBinding", "ClusterRole", "ClusterRoleBinding", "Lease"} {
		if kinds[k] == 0 {
			t.Errorf("rbac.yaml and lease.yaml have no %s", k)
		}
	}
}

// applyManifests creates every object of the named files of deploy/syncer
// as the cluster admin, with strict field validation, and counts them by
// kind.
func applyManifests(t *testing.T, c *framework.Cluster, files ...string) map[string]int {
	t.Helper()
	cl, err := client.New(c.Config, client.Options{})
	if err != nil {
		t.Fatal(err)
	}
	root := tools.MustRepoRoot(t)
	kinds := map[string]int{}
	for _, file := range files {
		data, err := os.ReadFile(filepath.Join(root, "deploy", "syncer", file))
		if err != nil {
			t.Fatal(err)
		}
		objs, err := objects.Decode(data)
		if err != nil {
			t.Fatalf("decode %s: %v", file, err)
		}
		for _, u := range objs {
			kinds[u.GetKind()]++
			if err := cl.Create(t.Context(), u, client.FieldValidation("Strict")); err != nil {
				t.Fatalf("create %s from %s: %v", u.GetKind(), file, err)
			}
		}
	}
	return kinds
}

// serviceAccountConfig returns a client configuration that authenticates
// as the ServiceAccount cabundle-syncer with a token from TokenRequest, and
// a kubeconfig file for it.
func serviceAccountConfig(t *testing.T, c *framework.Cluster) (*rest.Config, string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "cabundle-syncer.kubeconfig")
	if err := framework.WriteServiceAccountKubeconfig(context.Background(), c.Clientset, c.KubeconfigPath,
		namespace, "cabundle-syncer", time.Hour, path); err != nil {
		t.Fatal(err)
	}
	cfg, err := clientcmd.BuildConfigFromFlags("", path)
	if err != nil {
		t.Fatal(err)
	}
	return cfg, path
}

// kimSnatchManager is the field manager of kim-snatch 1.0.x, which the
// syncer releases by default (docs/operations.md, "Upgrade").
const kimSnatchManager = "snatch"

func TestRunsUnderTheRBACOfTheManifests(t *testing.T) {
	c := newCluster(t)
	cs := c.Clientset
	ctx := context.Background()
	caA := certtest.MustCA(t, certtest.Options{CommonName: "ca-a"})
	setupObjects(t, cs, caA)
	applyAsEarlierWriters(t, cs, caA)
	applyRBAC(t, c)
	applyManifests(t, c, "policy.yaml")
	saCfg, kubeconfig := serviceAccountConfig(t, c)
	sa := kubernetes.NewForConfigOrDie(saCfg)
	mwc, err := cs.AdmissionregistrationV1().MutatingWebhookConfigurations().Get(ctx, mwcName, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	waitPolicyEnforced(t, sa, mwc)

	// Leader election on the shipped Lease, the cache, the release of the
	// old apply entry and of kim-snatch's (the default of
	// --release-field-managers), both under the policy, the writes of the caBundles and the overlap state
	// (under the policy of policy.yaml) and the Events all run under the
	// ServiceAccount.
	p := startSyncer(t, "syncer", append([]string{"--kubeconfig=" + kubeconfig}, leaseFlags...)...)
	p.waitMetric("cabundle_syncer_is_leader", 1, 30*time.Second)
	waitBundle(t, cs, caA.Fingerprint())
	checkApplyEntryReleased(t, cs, syncer.FieldManager)
	checkApplyEntryReleased(t, cs, kimSnatchManager)
	caB := certtest.MustCA(t, certtest.Options{CommonName: "ca-b"})
	putCA(t, cs, caB)
	checkSuperseded(t, waitBundle(t, cs, caB.Fingerprint(), caA.Fingerprint()), caA)
	secret := syncertest.CertSecret(namespace, secretName, "ca.crt", []byte("garbage"))
	if _, err := cs.CoreV1().Secrets(namespace).Update(ctx, secret, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := syncertest.WaitForEvent(ctx, cs, namespace, secretName, corev1.EventTypeWarning, syncer.EventSourceUnparsable, 30*time.Second); err != nil {
		t.Error(err)
	}
	putCA(t, cs, caB)
	p.waitMetric("cabundle_syncer_source_valid", 1, 30*time.Second)
	if log := p.Log(); strings.Contains(log, "forbidden") {
		t.Errorf("the syncer was refused something:\n%s", grepLines(log, "forbidden"))
	}

	checkScoping(ctx, t, sa)
}

// checkScoping checks that the scoping is real: the ServiceAccount of sa
// reads the one Secret and the one emergency-disable ConfigMap only through
// a field selector, and nothing else.
func checkScoping(ctx context.Context, t *testing.T, sa kubernetes.Interface) {
	t.Helper()
	secrets, configMaps := sa.CoreV1().Secrets(namespace), sa.CoreV1().ConfigMaps(namespace)
	mwcs := sa.AdmissionregistrationV1().MutatingWebhookConfigurations()
	dryRun := []string{metav1.DryRunAll}
	marker := syncertest.DisableMarker(namespace, syncer.EmergencyDisableName, "a reason", "someone")
	other := syncertest.WebhookConfiguration("other", "a.example.com")
	forbidden := []struct {
		name string
		call func() error
	}{
		{"list_secrets_without_selector_is_forbidden", func() error { return errOf(secrets.List(ctx, metav1.ListOptions{})) }},
		{"get_another_secret_is_forbidden", func() error { return errOf(secrets.Get(ctx, "other", metav1.GetOptions{})) }},
		{"list_configmaps_without_selector_is_forbidden", func() error { return errOf(configMaps.List(ctx, metav1.ListOptions{})) }},
		{"get_another_configmap_is_forbidden", func() error { return errOf(configMaps.Get(ctx, "other", metav1.GetOptions{})) }},
		{"create_the_emergency_disable_marker_is_forbidden", func() error {
			return errOf(configMaps.Create(ctx, marker, metav1.CreateOptions{DryRun: dryRun}))
		}},
		{"list_webhook_configurations_without_selector_is_forbidden", func() error { return errOf(mwcs.List(ctx, metav1.ListOptions{})) }},
		{"delete_the_webhook_configuration_is_forbidden", func() error {
			return mwcs.Delete(ctx, mwcName, metav1.DeleteOptions{DryRun: dryRun})
		}},
		{"create_a_webhook_configuration_is_forbidden", func() error {
			return errOf(mwcs.Create(ctx, other, metav1.CreateOptions{DryRun: dryRun}))
		}},
	}
	for _, f := range forbidden {
		t.Run(f.name, func(t *testing.T) {
			if err := f.call(); !apierrors.IsForbidden(err) {
				t.Errorf("got %v, want Forbidden", err)
			}
		})
	}
	if _, err := secrets.List(ctx, metav1.ListOptions{FieldSelector: "metadata.name=" + secretName}); err != nil {
		t.Errorf("list with the field selector, as the cache does: %v", err)
	}
	markerOnly := metav1.ListOptions{FieldSelector: "metadata.name=" + syncer.EmergencyDisableName}
	if _, err := configMaps.List(ctx, markerOnly); err != nil {
		t.Errorf("list the marker with the field selector, as the cache does: %v", err)
	}
}

// applyAsEarlierWriters leaves the object as a syncer that wrote with
// server-side apply left it, and then kim-snatch 1.0.x, which force-applies
// the whole object as snatch.
func applyAsEarlierWriters(t *testing.T, cs kubernetes.Interface, ca *certtest.Cert) {
	t.Helper()
	ctx := context.Background()
	old, err := syncertest.ApplyAsOldSyncer(ctx, cs, mwcName, syncer.FieldManager, ca.CertPEM, syncer.StateAnnotation, "{}")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := syncertest.ForceApply(ctx, cs, old, kimSnatchManager); err != nil {
		t.Fatal(err)
	}
}

// checkApplyEntryReleased waits until the syncer has removed the
// server-side apply entry of manager from the MWC.
func checkApplyEntryReleased(t *testing.T, cs kubernetes.Interface, manager string) {
	t.Helper()
	err := poll.Until(t.Context(), "the release of the server-side apply entry of "+manager, func(ctx context.Context) error {
		mwc, err := cs.AdmissionregistrationV1().MutatingWebhookConfigurations().Get(ctx, mwcName, metav1.GetOptions{})
		switch {
		case err != nil:
			return err
		case syncertest.HasApplyEntry(mwc, manager):
			return fmt.Errorf("the MWC's managed fields still have an apply entry of %s", manager)
		}
		return nil
	})
	if err != nil {
		t.Error(err)
	}
}

// checkSuperseded checks that the MWC's overlap state records ca as
// superseded, read as JSON.
func checkSuperseded(t *testing.T, mwc *admissionregistrationv1.MutatingWebhookConfiguration, ca *certtest.Cert) {
	t.Helper()
	var state struct {
		CAs map[string]struct {
			SupersededAt string `json:"supersededAt"`
		} `json:"cas"`
	}
	raw := mwc.Annotations[syncer.StateAnnotation]
	if err := json.Unmarshal([]byte(raw), &state); err != nil || state.CAs[ca.Fingerprint()].SupersededAt == "" {
		t.Errorf("annotation %s = %q (%v), want the overlap state with %s superseded", syncer.StateAnnotation, raw, err, ca.Cert.Subject.CommonName)
	}
}

// errOf is the error of a call whose result the test does not need.
func errOf[T any](_ T, err error) error { return err }

func grepLines(s, substr string) string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if strings.Contains(l, substr) {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}

package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"k8s.io/utils/ptr"

	"github.com/kyma-project/kim-snatch/pkg/certtest"
	"github.com/kyma-project/kim-snatch/pkg/syncer"
	"github.com/kyma-project/kim-snatch/pkg/syncer/syncertest"
	"github.com/kyma-project/kim-snatch/test/framework"
	"github.com/kyma-project/kim-snatch/test/tools"
)

// applyRBAC creates every object of deploy/syncer/rbac.yaml, the manifest
// the Deployment uses, as the cluster admin.
func applyRBAC(t *testing.T, cs kubernetes.Interface) {
	t.Helper()
	root, err := tools.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(filepath.Join(root, "deploy", "syncer", "rbac.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	reader := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(data)))
	kinds := map[string]int{}
	for {
		doc, err := reader.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if len(bytes.TrimSpace(doc)) == 0 {
			continue
		}
		obj, gvk, err := scheme.Codecs.UniversalDeserializer().Decode(doc, nil, nil)
		if err != nil {
			t.Fatalf("decode rbac.yaml: %v", err)
		}
		kinds[gvk.Kind]++
		switch o := obj.(type) {
		case *corev1.ServiceAccount:
			_, err = cs.CoreV1().ServiceAccounts(o.Namespace).Create(ctx, o, metav1.CreateOptions{})
		case *rbacv1.Role:
			_, err = cs.RbacV1().Roles(o.Namespace).Create(ctx, o, metav1.CreateOptions{})
		case *rbacv1.RoleBinding:
			_, err = cs.RbacV1().RoleBindings(o.Namespace).Create(ctx, o, metav1.CreateOptions{})
		case *rbacv1.ClusterRole:
			_, err = cs.RbacV1().ClusterRoles().Create(ctx, o, metav1.CreateOptions{})
		case *rbacv1.ClusterRoleBinding:
			_, err = cs.RbacV1().ClusterRoleBindings().Create(ctx, o, metav1.CreateOptions{})
		default:
			t.Fatalf("rbac.yaml holds a %s; this test does not know it", gvk)
		}
		if err != nil {
			t.Fatalf("create %s from rbac.yaml: %v", gvk.Kind, err)
		}
	}
	for _, k := range []string{"ServiceAccount", "Role", "RoleBinding", "ClusterRole", "ClusterRoleBinding"} {
		if kinds[k] == 0 {
			t.Errorf("rbac.yaml has no %s", k)
		}
	}
}

// serviceAccountConfig returns a client configuration that authenticates
// as the ServiceAccount cabundle-syncer with a token from TokenRequest, and
// a kubeconfig file for it.
func serviceAccountConfig(t *testing.T, c *framework.Cluster) (*rest.Config, string) {
	t.Helper()
	tr, err := c.Clientset.CoreV1().ServiceAccounts(namespace).CreateToken(context.Background(), "cabundle-syncer",
		&authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: ptr.To[int64](3600)}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	cfg := &rest.Config{
		Host:            c.Config.Host,
		BearerToken:     tr.Status.Token,
		TLSClientConfig: rest.TLSClientConfig{CAData: c.Config.CAData},
	}
	kc := clientcmdapi.NewConfig()
	kc.Clusters["test"] = &clientcmdapi.Cluster{Server: cfg.Host, CertificateAuthorityData: cfg.CAData}
	kc.AuthInfos["cabundle-syncer"] = &clientcmdapi.AuthInfo{Token: cfg.BearerToken}
	kc.Contexts["test"] = &clientcmdapi.Context{Cluster: "test", AuthInfo: "cabundle-syncer"}
	kc.CurrentContext = "test"
	path := filepath.Join(t.TempDir(), "cabundle-syncer.kubeconfig")
	if err := clientcmd.WriteToFile(*kc, path); err != nil {
		t.Fatal(err)
	}
	return cfg, path
}

func TestRunsUnderTheRBACOfTheManifests(t *testing.T) {
	c := newCluster(t)
	cs := c.Clientset
	ctx := context.Background()
	caA := certtest.MustCA(t, certtest.Options{CommonName: "ca-a"})
	setupObjects(t, cs, caA)
	// The object as a syncer that wrote with server-side apply left it.
	if _, err := syncertest.ApplyAsOldSyncer(ctx, cs, mwcName, syncer.FieldManager, caA.CertPEM, syncer.StateAnnotation, "{}"); err != nil {
		t.Fatal(err)
	}
	applyRBAC(t, cs)
	saCfg, kubeconfig := serviceAccountConfig(t, c)

	// Leader election, the Lease, the cache, the release of the old apply
	// entry, the write and the Events all run under the ServiceAccount.
	p := startSyncer(t, "syncer", append([]string{"--kubeconfig=" + kubeconfig}, leaseFlags...)...)
	p.waitMetric("cabundle_syncer_is_leader", 1, 30*time.Second)
	waitBundle(t, cs, caA.Fingerprint())
	err := wait.PollUntilContextTimeout(ctx, 50*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		mwc, err := cs.AdmissionregistrationV1().MutatingWebhookConfigurations().Get(ctx, mwcName, metav1.GetOptions{})
		return err == nil && !syncertest.HasApplyEntry(mwc, syncer.FieldManager), nil
	})
	if err != nil {
		t.Errorf("the old server-side apply entry of %s was not released: %v", syncer.FieldManager, err)
	}
	caB := certtest.MustCA(t, certtest.Options{CommonName: "ca-b"})
	putCA(t, cs, caB)
	waitBundle(t, cs, caB.Fingerprint(), caA.Fingerprint())
	if _, err := cs.CoordinationV1().Leases(namespace).Get(ctx, leaseName, metav1.GetOptions{}); err != nil {
		t.Errorf("Lease %s/%s: %v", namespace, leaseName, err)
	}
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

	// The scoping is real: the ServiceAccount reads the one Secret only
	// through a field selector, and nothing else.
	sa := kubernetes.NewForConfigOrDie(saCfg)
	forbidden := []struct {
		name string
		call func() error
	}{
		{"list_secrets_without_selector", func() error {
			_, err := sa.CoreV1().Secrets(namespace).List(ctx, metav1.ListOptions{})
			return err
		}},
		{"get_another_secret", func() error {
			_, err := sa.CoreV1().Secrets(namespace).Get(ctx, "other", metav1.GetOptions{})
			return err
		}},
		{"list_webhook_configurations_without_selector", func() error {
			_, err := sa.AdmissionregistrationV1().MutatingWebhookConfigurations().List(ctx, metav1.ListOptions{})
			return err
		}},
		{"delete_the_webhook_configuration", func() error {
			return sa.AdmissionregistrationV1().MutatingWebhookConfigurations().Delete(ctx, mwcName, metav1.DeleteOptions{DryRun: []string{metav1.DryRunAll}})
		}},
		{"create_a_webhook_configuration", func() error {
			_, err := sa.AdmissionregistrationV1().MutatingWebhookConfigurations().Create(ctx, syncertest.WebhookConfiguration("other", "a.example.com"), metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
			return err
		}},
	}
	for _, f := range forbidden {
		t.Run(f.name, func(t *testing.T) {
			if err := f.call(); !apierrors.IsForbidden(err) {
				t.Errorf("got %v, want Forbidden", err)
			}
		})
	}
	if _, err := sa.CoreV1().Secrets(namespace).List(ctx, metav1.ListOptions{FieldSelector: "metadata.name=" + secretName}); err != nil {
		t.Errorf("list with the field selector, as the cache does: %v", err)
	}
}

func grepLines(s, substr string) string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if strings.Contains(l, substr) {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}

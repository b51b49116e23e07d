package certmgmt

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/dynamic"

	"github.com/kyma-project/kim-snatch/test/framework"
)

const ns = "kyma-system"

// env is one control plane with the CRDs installed and the controller
// running, shared by the subtests, which run one after another.
type env struct {
	cluster *framework.Cluster
	ctrl    *Controller
	dyn     dynamic.Interface
	// issuer and cert are the two objects of deploy/webhook/certificate.yaml.
	issuer, cert *unstructured.Unstructured
	manifest     string
}

func TestController(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a control plane")
	}
	c := framework.New(t, framework.Options{ControllerManager: true})
	ctx := t.Context()
	if err := InstallCRDs(ctx, c.Config); err != nil {
		t.Fatal(err)
	}
	ctrl, err := NewController(c.Config)
	if err != nil {
		t.Fatal(err)
	}
	if err := ctrl.Start(ctx); err != nil {
		t.Fatal(err)
	}
	dyn, err := dynamic.NewForConfig(c.Config)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Clientset.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	e := &env{cluster: c, ctrl: ctrl, dyn: dyn}
	e.loadManifest(t)

	// The shipped objects come first: kube-controller-manager's garbage
	// collector starts to watch the new kinds only at its next discovery.
	t.Run("shipped manifest", e.testShippedManifest)
	t.Run("issue, reissue, renew", e.testLifecycle)
	t.Run("what cert-management rejects", e.testRejected)
	t.Run("two writers", e.testTwoWriters)
	t.Run("delete with orphan keeps the Secret", func(t *testing.T) { e.testDelete(t, metav1.DeletePropagationOrphan) })
	t.Run("delete in background deletes the Secret", func(t *testing.T) { e.testDelete(t, metav1.DeletePropagationBackground) })
}

// testShippedManifest applies deploy/webhook/certificate.yaml as the
// migration guide does and expects what cert-management does with it.
func (e *env) testShippedManifest(t *testing.T) {
	e.kubectl(t, "apply", "-n", ns, "-f", e.manifest)
	for _, short := range []string{"cert", "issuer"} {
		if out := e.kubectl(t, "get", short, "-n", ns, "-o", "name"); !strings.Contains(out, "/kim-snatch-") {
			t.Errorf("kubectl get %s: %q", short, out)
		}
	}
	cn, _, _ := unstructured.NestedString(e.cert.Object, "spec", "commonName")
	dnsNames, _, _ := unstructured.NestedStringSlice(e.cert.Object, "spec", "dnsNames")
	secretName, _, _ := unstructured.NestedString(e.cert.Object, "spec", "secretRef", "name")
	// cert-management rejects a commonName repeated in dnsNames with state
	// Error ("duplicate domain"), and then issues nothing.
	if dup := duplicateDomain(cn, dnsNames); dup != "" {
		t.Fatalf("%s lists its commonName %q in dnsNames too", e.manifest, dup)
	}
	u := e.waitState(t, e.cert.GetName(), "Ready")
	e.verify(t, u, secretName, dnsNames)
}

// testLifecycle issues a Certificate shaped like the shipped one, changes its
// names, and renews it with Renew, with spec.renew and by deleting the
// Secret; each time a new key and certificate for the current names arrive,
// and other keys and labels of the Secret stay.
func (e *env) testLifecycle(t *testing.T) {
	ctx := t.Context()
	e.create(t, e.certificate("lifecycle", "lifecycle-tls"))
	u := e.waitState(t, "lifecycle", "Ready")
	first := e.verify(t, u, "lifecycle-tls", e.shippedNames())

	secrets := e.cluster.Clientset.CoreV1().Secrets(ns)
	s, err := secrets.Get(ctx, "lifecycle-tls", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	s.Data["extra"], s.Labels["keep"] = []byte("x"), "me"
	if _, err := secrets.Update(ctx, s, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}

	names := []string{"one.example", "two.example"}
	e.patch(t, "lifecycle", map[string]any{"spec": map[string]any{"dnsNames": names}})
	second := e.waitIssued(t, "lifecycle", "lifecycle-tls", names, first)

	if err := e.ctrl.Renew(ctx, ns, "lifecycle"); err != nil {
		t.Fatal(err)
	}
	u = e.get(t, "lifecycle")
	third := e.verify(t, u, "lifecycle-tls", names)
	if third.SerialNumber.Cmp(second.SerialNumber) == 0 || bytes.Equal(third.RawSubjectPublicKeyInfo, second.RawSubjectPublicKeyInfo) {
		t.Errorf("Renew kept the serial or the key")
	}

	e.patch(t, "lifecycle", map[string]any{"spec": map[string]any{"renew": true}})
	fourth := e.waitIssued(t, "lifecycle", "lifecycle-tls", names, third)
	if renew, found, _ := unstructured.NestedFieldNoCopy(e.get(t, "lifecycle").Object, "spec", "renew"); found {
		t.Errorf("spec.renew = %v after the renewal, want it consumed", renew)
	}

	s, err = secrets.Get(ctx, "lifecycle-tls", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if string(s.Data["extra"]) != "x" || s.Labels["keep"] != "me" {
		t.Errorf("other key or label lost: data %v, labels %v", slices.Sorted(maps.Keys(s.Data)), s.Labels)
	}
	if err := secrets.Delete(ctx, "lifecycle-tls", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	e.waitIssued(t, "lifecycle", "lifecycle-tls", names, fourth)
}

// testRejected covers the Certificates cert-management does not issue, and
// an Issuer that appears after its Certificate.
func (e *env) testRejected(t *testing.T) {
	for name, tc := range map[string]struct {
		change map[string]any
		msg    string
	}{
		"not-ca":    {map[string]any{"isCA": false}, "isCA"},
		"duplicate": {map[string]any{"commonName": "dup.example", "dnsNames": []any{"dup.example"}}, "duplicate domain: dup.example"},
		"rsa":       {map[string]any{"privateKey": map[string]any{"algorithm": "RSA", "size": int64(2048)}}, "ECDSA P-256"},
		"late":      {map[string]any{"issuerRef": map[string]any{"name": "late"}}, "issuer kyma-system/late not found"},
	} {
		crt := e.certificate(name, name+"-tls")
		maps.Copy(crt.Object["spec"].(map[string]any), tc.change)
		e.create(t, crt)
		u := e.waitState(t, name, "Error")
		if msg, _, _ := unstructured.NestedString(u.Object, "status", "message"); !strings.Contains(msg, tc.msg) {
			t.Errorf("%s: message %q, want it to contain %q", name, msg, tc.msg)
		}
		if _, err := e.cluster.Clientset.CoreV1().Secrets(ns).Get(t.Context(), name+"-tls", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
			t.Errorf("%s: Secret of a Certificate in state Error: %v, want NotFound", name, err)
		}
	}
	late := e.issuer.DeepCopy()
	late.SetName("late")
	e.create(t, late)
	u := e.waitState(t, "late", "Ready")
	e.verify(t, u, "late-tls", e.shippedNames())
}

// testTwoWriters lets two Certificates write one Secret, the state the
// migration must end: each writes when it issues, and the last writer owns
// the Secret. Deleting one with orphan, as the migration guide does, leaves
// one writer and the Secret.
func (e *env) testTwoWriters(t *testing.T) {
	ctx := t.Context()
	uids := map[string]types.UID{}
	for _, name := range []string{"writer-a", "writer-b"} {
		uids[ns+"/"+name] = e.create(t, e.certificate(name, "shared-tls")).GetUID()
		e.waitState(t, name, "Ready")
	}
	e.wantWriters(t, "shared-tls", ns+"/writer-a", ns+"/writer-b")
	for _, name := range []string{"writer-a", "writer-b", "writer-a"} {
		if err := e.ctrl.Renew(ctx, ns, name); err != nil {
			t.Fatal(err)
		}
		s, err := e.cluster.Clientset.CoreV1().Secrets(ns).Get(ctx, "shared-tls", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if got := s.Annotations[WriterAnnotation]; got != ns+"/"+name {
			t.Errorf("after %s renewed: writer annotation %q", name, got)
		}
		if refs := s.OwnerReferences; len(refs) != 1 || refs[0].UID != uids[ns+"/"+name] {
			t.Errorf("after %s renewed: ownerReferences %v, want only %s", name, refs, name)
		}
		e.verify(t, e.get(t, name), "shared-tls", e.shippedNames())
	}
	e.delete(t, "writer-a", metav1.DeletePropagationOrphan)
	e.waitOrphaned(t, "shared-tls", uids[ns+"/writer-a"])
	e.wantWriters(t, "shared-tls", ns+"/writer-b")
	if err := e.ctrl.Renew(ctx, ns, "writer-b"); err != nil {
		t.Fatal(err)
	}
	e.verify(t, e.get(t, "writer-b"), "shared-tls", e.shippedNames())
}

// testDelete deletes an issued Certificate with the propagation policy:
// Orphan keeps the Secret without the ownerReference, Background lets the
// garbage collector delete it.
func (e *env) testDelete(t *testing.T, policy metav1.DeletionPropagation) {
	name := "delete-" + strings.ToLower(string(policy))
	uid := e.create(t, e.certificate(name, name+"-tls")).GetUID()
	e.verify(t, e.waitState(t, name, "Ready"), name+"-tls", e.shippedNames())
	e.delete(t, name, policy)
	if policy == metav1.DeletePropagationOrphan {
		e.waitOrphaned(t, name+"-tls", uid)
		e.wantWriters(t, name+"-tls")
		return
	}
	e.eventually(t, "Secret deleted", func(ctx context.Context) error {
		_, err := e.cluster.Clientset.CoreV1().Secrets(ns).Get(ctx, name+"-tls", metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return nil
		}
		return fmt.Errorf("Secret still there (%v)", err)
	})
}

// verify checks the Secret of the Certificate u against its spec and status
// independently of the controller, and returns the certificate in it.
func (e *env) verify(t *testing.T, u *unstructured.Unstructured, secretName string, dnsNames []string) *x509.Certificate {
	t.Helper()
	s, err := e.cluster.Clientset.CoreV1().Secrets(ns).Get(t.Context(), secretName, metav1.GetOptions{})
	if err != nil {
		t.Fatalf("Secret of %s: %v", u.GetName(), err)
	}
	cert, err := checkSecret(s, dnsNames)
	if err != nil {
		t.Fatalf("Secret %s: %v", secretName, err)
	}
	if s.Labels[CertificateLabel] != "true" {
		t.Errorf("Secret %s: labels %v, want %s=true", secretName, s.Labels, CertificateLabel)
	}
	if exp, _, _ := unstructured.NestedString(u.Object, "status", "expirationDate"); exp != cert.NotAfter.UTC().Format(time.RFC3339) {
		t.Errorf("%s: expirationDate %q, certificate notAfter %s", u.GetName(), exp, cert.NotAfter)
	}
	return cert
}

// checkSecret is the oracle: the Secret holds a self-signed CA certificate
// for exactly dnsNames with an ECDSA P-256 key that matches tls.key, and
// ca.crt is tls.crt.
func checkSecret(s *corev1.Secret, dnsNames []string) (*x509.Certificate, error) {
	block, _ := pem.Decode(s.Data[CertKey])
	if block == nil {
		return nil, errors.New("tls.crt holds no PEM block")
	}
	cert, err := x509.ParseCertificate(block.Bytes)
	if err != nil {
		return nil, err
	}
	if !slices.Equal(cert.DNSNames, dnsNames) {
		return nil, fmt.Errorf("DNS names %v, want %v", cert.DNSNames, dnsNames)
	}
	if !cert.IsCA || !cert.BasicConstraintsValid || cert.CheckSignatureFrom(cert) != nil {
		return nil, errors.New("not a self-signed CA certificate")
	}
	if key, ok := cert.PublicKey.(*ecdsa.PublicKey); !ok || key.Curve != elliptic.P256() {
		return nil, fmt.Errorf("public key %T, want ECDSA P-256", cert.PublicKey)
	}
	if !bytes.Equal(s.Data[CAKey], s.Data[CertKey]) {
		return nil, errors.New("ca.crt is not tls.crt")
	}
	if _, err := tls.X509KeyPair(s.Data[CertKey], s.Data[KeyKey]); err != nil {
		return nil, fmt.Errorf("tls.key does not match: %w", err)
	}
	return cert, nil
}

// duplicateDomain returns the first name that appears twice among commonName
// and dnsNames: cert-management refuses such a Certificate.
func duplicateDomain(cn string, dnsNames []string) string {
	for i, d := range dnsNames {
		if d == cn || slices.Contains(dnsNames[:i], d) {
			return d
		}
	}
	return ""
}

// waitIssued waits until the Secret holds a certificate for dnsNames other
// than prev and the Certificate's status reports it, and checks both.
func (e *env) waitIssued(t *testing.T, name, secretName string, dnsNames []string, prev *x509.Certificate) *x509.Certificate {
	t.Helper()
	e.eventually(t, "new certificate in "+secretName, func(ctx context.Context) error {
		s, err := e.cluster.Clientset.CoreV1().Secrets(ns).Get(ctx, secretName, metav1.GetOptions{})
		if err != nil {
			return err
		}
		cert, err := checkSecret(s, dnsNames)
		if err != nil || cert.SerialNumber.Cmp(prev.SerialNumber) == 0 {
			return fmt.Errorf("not a new certificate for %v (%v)", dnsNames, err)
		}
		u, err := e.dyn.Resource(CertificateResource).Namespace(ns).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		exp, _, _ := unstructured.NestedString(u.Object, "status", "expirationDate")
		observed, _, _ := unstructured.NestedInt64(u.Object, "status", "observedGeneration")
		if exp != cert.NotAfter.UTC().Format(time.RFC3339) || observed != u.GetGeneration() {
			return errors.New("status does not report the new certificate yet")
		}
		return nil
	})
	return e.verify(t, e.waitState(t, name, "Ready"), secretName, dnsNames)
}

// waitState waits until the Certificate's status is state for its current
// generation.
func (e *env) waitState(t *testing.T, name, state string) *unstructured.Unstructured {
	t.Helper()
	var u *unstructured.Unstructured
	e.eventually(t, name+" in state "+state, func(ctx context.Context) error {
		var err error
		if u, err = e.dyn.Resource(CertificateResource).Namespace(ns).Get(ctx, name, metav1.GetOptions{}); err != nil {
			return err
		}
		got, _, _ := unstructured.NestedString(u.Object, "status", "state")
		observed, _, _ := unstructured.NestedInt64(u.Object, "status", "observedGeneration")
		if got != state || observed != u.GetGeneration() {
			return fmt.Errorf("state %q for generation %d of %d", got, observed, u.GetGeneration())
		}
		return nil
	})
	return u
}

// waitOrphaned waits until the Certificate is gone and the garbage collector
// has removed its ownerReference from the Secret, which then stays.
func (e *env) waitOrphaned(t *testing.T, secretName string, uid types.UID) {
	t.Helper()
	e.eventually(t, secretName+" orphaned", func(ctx context.Context) error {
		s, err := e.cluster.Clientset.CoreV1().Secrets(ns).Get(ctx, secretName, metav1.GetOptions{})
		if err != nil {
			return err
		}
		for _, ref := range s.OwnerReferences {
			if ref.UID == uid {
				return errors.New("ownerReference to the deleted Certificate still there")
			}
		}
		return nil
	})
	e.eventually(t, "Certificate gone", func(ctx context.Context) error {
		list, err := e.dyn.Resource(CertificateResource).Namespace(ns).List(ctx, metav1.ListOptions{})
		if err != nil {
			return err
		}
		for _, u := range list.Items {
			if u.GetUID() == uid {
				return errors.New("still there")
			}
		}
		return nil
	})
}

func (e *env) wantWriters(t *testing.T, secretName string, want ...string) {
	t.Helper()
	got, err := e.ctrl.Writers(t.Context(), ns, secretName)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(got, want) {
		t.Errorf("writers of %s: %v, want %v", secretName, got, want)
	}
}

func (e *env) eventually(t *testing.T, what string, cond func(context.Context) error) {
	t.Helper()
	var last error
	err := wait.PollUntilContextTimeout(t.Context(), 200*time.Millisecond, 3*time.Minute, true, func(ctx context.Context) (bool, error) {
		last = cond(ctx)
		return last == nil, nil
	})
	if err != nil {
		t.Fatalf("%s: %v (last: %v)", what, err, last)
	}
}

// certificate returns the shipped Certificate renamed, writing secretName,
// with a commonName that is not one of its dnsNames.
func (e *env) certificate(name, secretName string) *unstructured.Unstructured {
	u := e.cert.DeepCopy()
	u.SetName(name)
	u.SetNamespace(ns)
	spec := u.Object["spec"].(map[string]any)
	spec["commonName"] = name + ".certificates.test"
	spec["secretRef"] = map[string]any{"name": secretName, "namespace": ns}
	return u
}

func (e *env) shippedNames() []string {
	names, _, _ := unstructured.NestedStringSlice(e.cert.Object, "spec", "dnsNames")
	return names
}

func (e *env) create(t *testing.T, u *unstructured.Unstructured) *unstructured.Unstructured {
	t.Helper()
	res := CertificateResource
	if u.GetKind() == "Issuer" {
		res = IssuerResource
	}
	got, err := e.dyn.Resource(res).Namespace(ns).Create(t.Context(), u, metav1.CreateOptions{FieldValidation: "Strict"})
	if err != nil {
		t.Fatalf("create %s %s: %v", u.GetKind(), u.GetName(), err)
	}
	return got
}

func (e *env) get(t *testing.T, name string) *unstructured.Unstructured {
	t.Helper()
	u, err := e.dyn.Resource(CertificateResource).Namespace(ns).Get(t.Context(), name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return u
}

func (e *env) patch(t *testing.T, name string, patch map[string]any) {
	t.Helper()
	data, err := json.Marshal(patch)
	if err == nil {
		_, err = e.dyn.Resource(CertificateResource).Namespace(ns).Patch(t.Context(), name, types.MergePatchType, data, metav1.PatchOptions{})
	}
	if err != nil {
		t.Fatalf("patch %s: %v", name, err)
	}
}

func (e *env) delete(t *testing.T, name string, policy metav1.DeletionPropagation) {
	t.Helper()
	err := e.dyn.Resource(CertificateResource).Namespace(ns).Delete(t.Context(), name, metav1.DeleteOptions{PropagationPolicy: &policy})
	if err != nil {
		t.Fatalf("delete %s: %v", name, err)
	}
}

// loadManifest reads the Issuer and the Certificate of
// deploy/webhook/certificate.yaml.
func (e *env) loadManifest(t *testing.T) {
	root, err := framework.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	e.manifest = filepath.Join(root, "deploy", "webhook", "certificate.yaml")
	data, err := os.ReadFile(e.manifest)
	if err != nil {
		t.Fatal(err)
	}
	dec := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(data), 4096)
	for {
		u := &unstructured.Unstructured{}
		if err := dec.Decode(&u.Object); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			t.Fatalf("%s: %v", e.manifest, err)
		}
		switch u.GetKind() {
		case "Issuer":
			u.SetNamespace(ns)
			e.issuer = u
		case "Certificate":
			e.cert = u
		}
	}
	if e.issuer == nil || e.cert == nil {
		t.Fatalf("%s: want an Issuer and a Certificate", e.manifest)
	}
}

func (e *env) kubectl(t *testing.T, args ...string) string {
	t.Helper()
	bin, err := framework.Kubectl()
	if err != nil {
		t.Fatal(err)
	}
	args = append([]string{"--kubeconfig", e.cluster.KubeconfigPath, "--cache-dir", t.TempDir()}, args...)
	out, err := exec.CommandContext(t.Context(), bin, args...).CombinedOutput()
	if err != nil {
		t.Fatalf("kubectl %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

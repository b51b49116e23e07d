package e2e

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/tls"
	"slices"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/kyma-project/kim-snatch/pkg/cabundle"
	"github.com/kyma-project/kim-snatch/pkg/certtest"
	"github.com/kyma-project/kim-snatch/test/e2e/stack"
	"github.com/kyma-project/kim-snatch/test/framework"
)

// What the design rests on (docs/architecture.md), checked on what the real
// Gardener cert-management writes for the shipped Issuer and Certificate:
// the Secret holds tls.crt, tls.key and ca.crt; for the self-signed isCA
// issuer ca.crt is tls.crt, a CA for the Certificate's names with the
// requested ECDSA P-256 key; a renewal replaces the CA and the key; and
// the Secret holds the new CA no later than the Certificate reports it
// Ready, so that the syncer, which watches the Secret alone, is never
// behind the Certificate's status.
func TestCertManagementWritesWhatTheDesignAssumes(t *testing.T) {
	framework.InTier(t, framework.Full, "pins the neighbour's behaviour; the smoke's rotation depends on it and fails if it changes")
	framework.Alone(t, "it renews the CA and pauses cert-management")
	servedAfter(t)
	ctx := context.Background()
	cs := sys.Clientset()
	before := secretFacts(t)

	cfg, err := clientcmd.BuildConfigFromFlags("", sys.KubeconfigPath())
	if err != nil {
		t.Fatal(err)
	}
	dyn := dynamic.NewForConfigOrDie(cfg)
	r, err := stack.Renew(ctx, cs, dyn, stack.Namespace, stack.CertificateName, stack.SecretName)
	if err != nil {
		t.Fatal(err)
	}
	after := secretFacts(t)
	logf("cert-management renewal: states %v; new CA in the Secret %s after spec.renew, Certificate Ready %s after spec.renew",
		r.States, r.SecretWritten.Sub(r.Requested).Round(time.Millisecond), r.Ready.Sub(r.Requested).Round(time.Millisecond))
	if before.fingerprint == after.fingerprint {
		t.Errorf("the renewal kept the CA %s", before.fingerprint)
	}
	if before.publicKey.Equal(after.publicKey) {
		t.Error("the renewal kept the key")
	}
	if r.Ready.Before(r.SecretWritten) {
		t.Errorf("the Certificate was Ready for the new certificate %s before the Secret held it", r.SecretWritten.Sub(r.Ready))
	}
	if err := sys.WaitBundleHas(ctx, time.Minute, after.fingerprint); err != nil {
		t.Error(err)
	}
}

// servedAfter has t's cleanup wait until every webhook replica serves the
// Secret's certificate. A test that has cert-management renew it leaves
// no replica behind on the old one: replicas that serve certificates of
// different expiry are what KimSnatchWebhookReplicasServeDifferentCertificates
// reports, and the next test's alert watch would count it as its own.
func servedAfter(t *testing.T) {
	t.Helper()
	t.Cleanup(func() {
		ctx := context.Background()
		if err := sys.WaitServed(ctx, stack.CurrentFingerprint(ctx, sys.Clientset())); err != nil {
			t.Error(err)
		}
	})
}

// certFacts are what the checks of the test need of one Secret.
type certFacts struct {
	fingerprint string
	publicKey   *ecdsa.PublicKey
}

// secretFacts checks the Secret cert-management wrote against the shipped
// Certificate and returns its CA's facts.
func secretFacts(t *testing.T) certFacts {
	t.Helper()
	sec, err := sys.Clientset().CoreV1().Secrets(stack.Namespace).Get(context.Background(), stack.SecretName, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	keys := make([]string, 0, len(sec.Data))
	for k := range sec.Data {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	logf("cert-management wrote Secret %s/%s: type %s, keys %v, annotations %v", sec.Namespace, sec.Name, sec.Type, keys, sec.Annotations)
	for _, k := range []string{certtest.CertFile, certtest.KeyFile, certtest.CAFile} {
		if len(sec.Data[k]) == 0 {
			t.Fatalf("Secret %s/%s has no %s (keys %v)", sec.Namespace, sec.Name, k, keys)
		}
	}
	if !bytes.Equal(bytes.TrimSpace(sec.Data[certtest.CAFile]), bytes.TrimSpace(sec.Data[certtest.CertFile])) {
		t.Errorf("ca.crt is not tls.crt:\n%s\ntls.crt:\n%s", sec.Data[certtest.CAFile], sec.Data[certtest.CertFile])
	}
	if _, err := tls.X509KeyPair(sec.Data[certtest.CertFile], sec.Data[certtest.KeyFile]); err != nil {
		t.Errorf("tls.key does not match tls.crt: %v", err)
	}
	certs, err := cabundle.Parse(sec.Data[certtest.CAFile])
	if err != nil || len(certs) != 1 {
		t.Fatalf("ca.crt holds %d certificates (%v), want one", len(certs), err)
	}
	ca := certs[0]
	if !ca.IsCA || !ca.BasicConstraintsValid {
		t.Errorf("ca.crt is no CA: isCA %v, basic constraints valid %v", ca.IsCA, ca.BasicConstraintsValid)
	}
	if err := ca.CheckSignatureFrom(ca); err != nil {
		t.Errorf("ca.crt is not self-signed: %v", err)
	}
	svc := stack.ServiceName + "." + stack.Namespace + ".svc"
	if want := []string{svc, svc + ".cluster.local"}; !slices.Equal(ca.DNSNames, want) {
		t.Errorf("DNS names %v, want the Certificate's %v", ca.DNSNames, want)
	}
	pub, ok := ca.PublicKey.(*ecdsa.PublicKey)
	if !ok || pub.Curve != elliptic.P256() {
		t.Fatalf("key %T, want ECDSA P-256 as the Certificate asks", ca.PublicKey)
	}
	logf("ca.crt: subject %q, isCA, ECDSA P-256, DNS names %v, valid %s to %s (%s)", ca.Subject.CommonName, ca.DNSNames,
		ca.NotBefore.UTC().Format(time.RFC3339), ca.NotAfter.UTC().Format(time.RFC3339), ca.NotAfter.Sub(ca.NotBefore).Round(time.Hour))
	return certFacts{fingerprint: cabundle.Fingerprint(ca), publicKey: pub}
}

// pauseCertManagement scales Gardener cert-management down to no replica
// and waits until its Pod is gone; what it returns scales it up again and
// waits for the rollout.
func pauseCertManagement(t *testing.T) func(context.Context) error {
	t.Helper()
	ctx := context.Background()
	kc := sys.KubeconfigPath()
	deploy := []string{"-n", "cert-management"}
	if _, err := stack.Kubectl(ctx, kc, append(deploy, "scale", "deployment/cert-controller-manager", "--replicas=0")...); err != nil {
		t.Fatal(err)
	}
	if _, err := stack.Kubectl(ctx, kc, append(deploy, "wait", "--for=delete", "pod", "-l", "app.kubernetes.io/name=cert-controller-manager", "--timeout=2m")...); err != nil {
		t.Fatal(err)
	}
	return resumeCertManagement
}

// resumeCertManagement starts Gardener cert-management again after
// pauseCertManagement, and waits until it runs.
func resumeCertManagement(ctx context.Context) error {
	kc := sys.KubeconfigPath()
	deploy := []string{"-n", "cert-management"}
	if _, err := stack.Kubectl(ctx, kc, append(deploy, "scale", "deployment/cert-controller-manager", "--replicas=1")...); err != nil {
		return err
	}
	_, err := stack.Kubectl(ctx, kc, append(deploy, "rollout", "status", "deployment/cert-controller-manager", "--timeout=3m")...)
	return err
}

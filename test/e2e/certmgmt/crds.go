package certmgmt

import (
	"cmp"
	"context"
	"embed"
	"fmt"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/yaml"
)

// The API of cert-management that the stand-in serves (CRDs in testdata/).
const (
	Group, Version = "cert.gardener.cloud", "v1alpha1"
	// FieldManager writes the Secrets, by server-side apply.
	FieldManager = "cert-management-stand-in"
	// CertificateLabel marks, with "true", every Secret a Certificate wrote.
	CertificateLabel = Group + "/certificate"
	// WriterAnnotation names the Certificate (namespace/name) that last wrote
	// the Secret. Only the stand-in records it; cert-management leaves just
	// the ownerReference.
	WriterAnnotation = Group + "/certificate"
)

// The resources of the Certificate and Issuer kinds.
var (
	CertificateResource = schema.GroupVersionResource{Group: Group, Version: Version, Resource: "certificates"}
	IssuerResource      = schema.GroupVersionResource{Group: Group, Version: Version, Resource: "issuers"}
)

// certificate holds the fields of a Certificate that the stand-in reads.
type certificate struct {
	metav1.ObjectMeta `json:"metadata"`
	Spec              struct {
		CommonName string   `json:"commonName"`
		DNSNames   []string `json:"dnsNames"`
		IsCA       bool     `json:"isCA"`
		Duration   string   `json:"duration"`
		Renew      bool     `json:"renew"`
		PrivateKey struct {
			Algorithm string `json:"algorithm"`
			Size      int    `json:"size"`
		} `json:"privateKey"`
		IssuerRef    ref               `json:"issuerRef"`
		SecretName   string            `json:"secretName"`
		SecretRef    ref               `json:"secretRef"`
		SecretLabels map[string]string `json:"secretLabels"`
	} `json:"spec"`
	Status struct {
		State              string `json:"state"`
		ObservedGeneration int64  `json:"observedGeneration"`
	} `json:"status"`
}

type ref struct {
	Name      string `json:"name"`
	Namespace string `json:"namespace"`
}

func parse(u *unstructured.Unstructured) (*certificate, error) {
	c := &certificate{}
	return c, runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, c)
}

// secret returns the Secret the Certificate writes: spec.secretRef, in the
// Certificate's namespace unless it names one, or spec.secretName.
func (c *certificate) secret() (namespace, name string) {
	return cmp.Or(c.Spec.SecretRef.Namespace, c.Namespace), cmp.Or(c.Spec.SecretRef.Name, c.Spec.SecretName)
}

//go:embed testdata/certificates.yaml testdata/issuers.yaml
var crdFiles embed.FS

var crdResource = schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}

// InstallCRDs creates the CustomResourceDefinitions of cert-management's
// Certificate and Issuer, keeping any that exist already, and returns once
// both are Established and served.
func InstallCRDs(ctx context.Context, cfg *rest.Config) error {
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return err
	}
	for _, f := range []string{"testdata/certificates.yaml", "testdata/issuers.yaml"} {
		data, err := crdFiles.ReadFile(f)
		if err != nil {
			return err
		}
		crd := &unstructured.Unstructured{}
		if err := yaml.Unmarshal(data, &crd.Object); err != nil {
			return fmt.Errorf("%s: %w", f, err)
		}
		_, err = dyn.Resource(crdResource).Create(ctx, crd, metav1.CreateOptions{FieldValidation: "Strict"})
		if err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("create CRD %s: %w", crd.GetName(), err)
		}
		if err := waitServed(ctx, dyn, crd.GetName()); err != nil {
			return err
		}
	}
	return nil
}

// waitServed waits until the CRD is Established and a list of its kind
// succeeds.
func waitServed(ctx context.Context, dyn dynamic.Interface, name string) error {
	var last error
	err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		crd, err := dyn.Resource(crdResource).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			last = err
			return false, nil
		}
		conds, _, _ := unstructured.NestedSlice(crd.Object, "status", "conditions")
		established := false
		for _, c := range conds {
			if c, ok := c.(map[string]any); ok && c["type"] == "Established" && c["status"] == "True" {
				established = true
			}
		}
		if !established {
			last = fmt.Errorf("not Established")
			return false, nil
		}
		group, _, _ := unstructured.NestedString(crd.Object, "spec", "group")
		plural, _, _ := unstructured.NestedString(crd.Object, "spec", "names", "plural")
		gvr := schema.GroupVersionResource{Group: group, Version: Version, Resource: plural}
		_, last = dyn.Resource(gvr).List(ctx, metav1.ListOptions{Limit: 1})
		return last == nil, nil
	})
	if err != nil {
		return fmt.Errorf("CRD %s not served: %w (last: %v)", name, err, last)
	}
	return nil
}

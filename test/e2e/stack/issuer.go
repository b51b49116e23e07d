package stack

import (
	"k8s.io/client-go/kubernetes"

	"github.com/kyma-project/kim-snatch/test/e2e/certmgmt"
)

// NewIssuer returns what stands in for Gardener cert-management in a
// cluster: it writes the Secret for the webhook Service's names.
func NewIssuer(cs kubernetes.Interface) *certmgmt.Issuer {
	svc := ServiceName + "." + Namespace + ".svc"
	return &certmgmt.Issuer{Client: cs, Namespace: Namespace, Name: SecretName, DNSNames: []string{svc, svc + ".cluster.local"}}
}

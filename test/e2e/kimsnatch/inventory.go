package kimsnatch

import (
	"bytes"
	_ "embed"
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kyma-project/kim-snatch/test/framework/objects"
)

// Names of the old installation and of what its binary wrote.
const (
	Namespace                = "kyma-system"
	WebhookServiceName       = "kim-snatch-webhook-service"
	DefaultWebhookConfigName = "kim-snatch-mutating-webhook-configuration"
	// WebhookEntryName is the MWC entry kubebuilder generated.
	WebhookEntryName  = "mpod-v1.kb.io"
	DefaultWorkerPool = "cpu-worker-0"
	Path              = "/mutate--v1-pod"
	FieldManager      = "snatch"
	// PoolLabel is the Node label of the term, and the Pod annotation of
	// the fallback.
	PoolLabel = "worker.gardener.cloud/pool"
)

//go:embed testdata/install.yaml
var installYAML []byte

// InstallYAML is the old installation as one multi-document YAML stream,
// for `kubectl apply -f -`, which is how the old manifests were installed.
func InstallYAML() []byte { return bytes.Clone(installYAML) }

// Inventory returns the old installation's objects in kyma-system and at
// cluster scope, in apply order. The Certificate (cert.gardener.cloud) needs
// its CustomResourceDefinition.
func Inventory() ([]*unstructured.Unstructured, error) {
	objs, err := objects.Decode(installYAML)
	if err != nil {
		return nil, fmt.Errorf("read the old installation: %w", err)
	}
	return objs, nil
}

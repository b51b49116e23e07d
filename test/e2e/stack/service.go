package stack

import (
	"errors"
	"fmt"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/kyma-project/kim-snatch/test/framework"
	"github.com/kyma-project/kim-snatch/test/framework/objects"
)

// RenderWebhookConfiguration renders deploy/webhook with kubectl kustomize
// and returns its MutatingWebhookConfiguration.
func RenderWebhookConfiguration() (*admissionregistrationv1.MutatingWebhookConfiguration, error) {
	out, err := framework.Kustomize("deploy/webhook")
	if err != nil {
		return nil, err
	}
	objs, err := objects.Decode(out)
	if err != nil {
		return nil, fmt.Errorf("read deploy/webhook: %w", err)
	}
	found := objects.OfKind(objs, "MutatingWebhookConfiguration")
	if len(found) == 0 {
		return nil, errors.New("no MutatingWebhookConfiguration in deploy/webhook")
	}
	mwc := &admissionregistrationv1.MutatingWebhookConfiguration{}
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(found[0].Object, mwc); err != nil {
		return nil, fmt.Errorf("decode MutatingWebhookConfiguration of deploy/webhook: %w", err)
	}
	return mwc, nil
}

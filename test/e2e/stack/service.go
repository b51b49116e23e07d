package stack

import (
	"bytes"
	"errors"
	"fmt"
	"io"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"

	"github.com/kyma-project/kim-snatch/test/framework"
)

// RenderWebhookConfiguration renders deploy/webhook with kubectl kustomize
// and returns its MutatingWebhookConfiguration.
func RenderWebhookConfiguration() (*admissionregistrationv1.MutatingWebhookConfiguration, error) {
	out, err := framework.Kustomize("deploy/webhook")
	if err != nil {
		return nil, err
	}
	dec := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(out), 4096)
	for {
		var u unstructured.Unstructured
		if err := dec.Decode(&u.Object); errors.Is(err, io.EOF) {
			return nil, errors.New("no MutatingWebhookConfiguration in deploy/webhook")
		} else if err != nil {
			return nil, fmt.Errorf("read deploy/webhook: %w", err)
		}
		if u.GetKind() == "MutatingWebhookConfiguration" {
			mwc := &admissionregistrationv1.MutatingWebhookConfiguration{}
			if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, mwc); err != nil {
				return nil, fmt.Errorf("decode MutatingWebhookConfiguration of deploy/webhook: %w", err)
			}
			return mwc, nil
		}
	}
}

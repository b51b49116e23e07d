package stack

import (
	"bytes"
	"errors"
	"fmt"
	"io"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
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
		var meta metav1.TypeMeta
		var raw runtime.RawExtension
		if err := dec.Decode(&raw); errors.Is(err, io.EOF) {
			return nil, errors.New("no MutatingWebhookConfiguration in deploy/webhook")
		} else if err != nil {
			return nil, fmt.Errorf("read deploy/webhook: %w", err)
		}
		if err := utilyaml.Unmarshal(raw.Raw, &meta); err != nil {
			return nil, fmt.Errorf("read deploy/webhook: %w", err)
		}
		if meta.Kind == "MutatingWebhookConfiguration" {
			mwc := &admissionregistrationv1.MutatingWebhookConfiguration{}
			if err := utilyaml.Unmarshal(raw.Raw, mwc); err != nil {
				return nil, fmt.Errorf("decode MutatingWebhookConfiguration of deploy/webhook: %w", err)
			}
			return mwc, nil
		}
	}
}

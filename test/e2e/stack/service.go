package stack

import (
	"bytes"
	"errors"
	"fmt"
	"io"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"

	"github.com/kyma-project/kim-snatch/test/framework"
)

// ServiceName is the Service of deploy/webhook that the
// MutatingWebhookConfiguration calls, in Namespace.
const ServiceName = WebhookName

// WebhookManifests are objects of deploy/webhook, as kustomize renders
// them.
type WebhookManifests struct {
	Configuration *admissionregistrationv1.MutatingWebhookConfiguration
	// Service is the Service named ServiceName.
	Service *corev1.Service
}

// RenderWebhookManifests renders deploy/webhook with kubectl kustomize and
// returns its MutatingWebhookConfiguration and the Service it calls.
func RenderWebhookManifests() (*WebhookManifests, error) {
	out, err := framework.Kustomize("deploy/webhook")
	if err != nil {
		return nil, err
	}
	m := &WebhookManifests{}
	dec := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(out), 4096)
	for {
		var meta metav1.TypeMeta
		var raw runtime.RawExtension
		if err := dec.Decode(&raw); err != nil {
			if errors.Is(err, io.EOF) {
				break
			}
			return nil, fmt.Errorf("read deploy/webhook: %w", err)
		}
		if err := utilyaml.Unmarshal(raw.Raw, &meta); err != nil {
			return nil, fmt.Errorf("read deploy/webhook: %w", err)
		}
		switch meta.Kind {
		case "MutatingWebhookConfiguration":
			m.Configuration = &admissionregistrationv1.MutatingWebhookConfiguration{}
			err = utilyaml.Unmarshal(raw.Raw, m.Configuration)
		case "Service":
			var svc corev1.Service
			if err = utilyaml.Unmarshal(raw.Raw, &svc); err == nil && svc.Name == ServiceName {
				m.Service = &svc
			}
		}
		if err != nil {
			return nil, fmt.Errorf("decode %s of deploy/webhook: %w", meta.Kind, err)
		}
	}
	switch {
	case m.Configuration == nil:
		return nil, errors.New("no MutatingWebhookConfiguration in deploy/webhook")
	case m.Service == nil:
		return nil, fmt.Errorf("no Service %s in deploy/webhook", ServiceName)
	}
	return m, nil
}

// ServicePort returns the port of m.Service that every webhook entry
// calls. The API server picks the EndpointSlice port by this port's name.
func (m *WebhookManifests) ServicePort() (corev1.ServicePort, error) {
	var found *corev1.ServicePort
	for _, w := range m.Configuration.Webhooks {
		ref := w.ClientConfig.Service
		if ref == nil || ref.Namespace != Namespace || ref.Name != ServiceName {
			return corev1.ServicePort{}, fmt.Errorf("webhook %s does not call Service %s/%s", w.Name, Namespace, ServiceName)
		}
		port := int32(443) // the API's default
		if ref.Port != nil {
			port = *ref.Port
		}
		var p *corev1.ServicePort
		for i := range m.Service.Spec.Ports {
			if m.Service.Spec.Ports[i].Port == port {
				p = &m.Service.Spec.Ports[i]
			}
		}
		switch {
		case p == nil:
			return corev1.ServicePort{}, fmt.Errorf("webhook %s calls port %d, which Service %s does not have", w.Name, port, ServiceName)
		case found != nil && found.Port != p.Port:
			return corev1.ServicePort{}, fmt.Errorf("the webhook entries call different ports of Service %s", ServiceName)
		}
		found = p
	}
	if found == nil {
		return corev1.ServicePort{}, errors.New("the MutatingWebhookConfiguration of deploy/webhook has no webhook")
	}
	return *found, nil
}

package migration

import (
	"bytes"
	"context"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/kyma-project/kim-snatch/test/framework/poll"
)

// bridgeInert is the match condition with which a bridge version keeps
// an entry that the API server never calls (docs/migration.md, "Through
// lifecycle-manager").
const bridgeInert = "false"

// waitSettled waits until every webhook entry can be called without a
// failure: for each entry the API server may call, its Service selects a
// ready Pod, and every ready Pod it selects serves the certificate the
// Secret holds, which the entry's caBundle verifies for the Service's
// name, as the API server verifies it. An entry that is never called
// (the bridge's inert one) is held to this as well once its Service
// exists, since the next step may make it the one called.
func (e *env) waitSettled(ctx context.Context) error {
	return poll.Until(ctx, "the webhook entries to settle", func(ctx context.Context) error {
		mwc, err := e.client.AdmissionregistrationV1().MutatingWebhookConfigurations().Get(ctx, mwcName, metav1.GetOptions{})
		if err != nil {
			return poll.Stop(err)
		}
		s, err := e.client.CoreV1().Secrets(namespace).Get(ctx, secretName, metav1.GetOptions{})
		if err != nil {
			return poll.Stop(err)
		}
		block, _ := pem.Decode(s.Data[corev1.TLSCertKey])
		if block == nil {
			return errors.New("the Secret holds no certificate")
		}
		for _, w := range mwc.Webhooks {
			if why := e.entryUnsettled(ctx, w, block.Bytes); why != "" {
				return fmt.Errorf("entry %s: %s", w.Name, why)
			}
		}
		return nil
	}, poll.Timeout(stepTimeout))
}

// entryUnsettled says why entry w cannot yet be called without a failure,
// or returns "".
func (e *env) entryUnsettled(ctx context.Context, w admissionregistrationv1.MutatingWebhook, leaf []byte) string {
	svc := w.ClientConfig.Service
	if svc == nil {
		return "calls no Service"
	}
	s, err := e.client.CoreV1().Services(svc.Namespace).Get(ctx, svc.Name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) && inert(w) {
		return ""
	} else if err != nil {
		return fmt.Sprintf("Service %s: %v", svc.Name, err)
	}
	roots := x509.NewCertPool()
	if !roots.AppendCertsFromPEM(w.ClientConfig.CABundle) {
		return "no caBundle"
	}
	pods, err := e.readyPods(ctx, svc.Namespace, labels.SelectorFromSet(s.Spec.Selector).String())
	if err != nil {
		return err.Error()
	}
	for _, p := range pods {
		got, err := servedLeaf(ctx, podWebhookAddr(p))
		if err != nil || !bytes.Equal(got, leaf) {
			return fmt.Sprintf("Pod %s does not serve the Secret's certificate (%v)", p.Name, err)
		}
		cert, err := x509.ParseCertificate(got)
		if err != nil {
			return err.Error()
		}
		name := svc.Name + "." + svc.Namespace + ".svc"
		if _, err := cert.Verify(x509.VerifyOptions{DNSName: name, Roots: roots}); err != nil {
			return fmt.Sprintf("the caBundle does not verify Pod %s's certificate for %s: %v", p.Name, name, err)
		}
	}
	if len(pods) == 0 {
		return fmt.Sprintf("Service %s selects no ready Pod", svc.Name)
	}
	return ""
}

// inert reports whether the API server never calls w: a match condition
// of the bridge is false.
func inert(w admissionregistrationv1.MutatingWebhook) bool {
	for _, c := range w.MatchConditions {
		if c.Expression == bridgeInert {
			return true
		}
	}
	return false
}

package migration

import (
	"bytes"
	"context"
	"crypto/tls"
	"encoding/pem"
	"fmt"
	"net"
	"slices"
	"strconv"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kyma-project/kim-snatch/test/framework/poll"
)

// The webhooks' Pods and the port their certificate is served on: the old
// Deployment's and deploy/webhook's.
const (
	oldPods     = "control-plane=controller-manager"
	newPods     = "app.kubernetes.io/name=snatch-webhook"
	webhookPort = 9443
)

// waitServing returns once every ready Pod of selector serves the
// certificate the Secret holds, as the API server sees it: a TLS handshake
// with the Pod's address. It returns how long after the Secret's last
// write that was: the real kubelet's projection of the Secret into the
// running Pods, plus the webhook's reload, which is well under a second.
// The Secret's write time is its managedFields', to the second, and the
// wait looks once a second.
func (e *env) waitServing(ctx context.Context, selector string) (time.Duration, error) {
	var (
		leaf    []byte
		written time.Time
	)
	what := "every ready Pod of " + selector + " to serve the Secret's certificate"
	err := poll.Until(ctx, what, func(ctx context.Context) error {
		s, err := e.client.CoreV1().Secrets(namespace).Get(ctx, secretName, metav1.GetOptions{})
		if err != nil {
			return poll.Stop(err)
		}
		block, _ := pem.Decode(s.Data[corev1.TLSCertKey])
		if block == nil {
			return poll.Stop(fmt.Errorf("secret %s has no certificate", secretName))
		}
		leaf, written = block.Bytes, time.Time{}
		for _, mf := range s.ManagedFields {
			if mf.Time != nil && mf.Time.After(written) {
				written = mf.Time.Time
			}
		}
		pods, err := e.readyPods(ctx, namespace, selector)
		if err != nil {
			return poll.Stop(err)
		}
		for _, p := range pods {
			if got, err := servedLeaf(ctx, podWebhookAddr(p)); err != nil || !bytes.Equal(got, leaf) {
				return fmt.Errorf("Pod %s does not serve the Secret's certificate yet (%v)", p.Name, err)
			}
		}
		if len(pods) == 0 {
			return fmt.Errorf("no ready Pod of %s", selector)
		}
		return nil
	}, poll.Timeout(5*time.Minute), poll.Interval(time.Second))
	if err != nil {
		return 0, err
	}
	return time.Since(written), nil
}

// readyPods returns the Pods of selector in ns that take calls: ready, with
// an address, and not being deleted.
func (e *env) readyPods(ctx context.Context, ns, selector string) ([]corev1.Pod, error) {
	pods, err := e.client.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: selector})
	if err != nil {
		return nil, err
	}
	return slices.DeleteFunc(pods.Items, func(p corev1.Pod) bool {
		return p.DeletionTimestamp != nil || p.Status.PodIP == "" || !podReady(&p)
	}), nil
}

// podWebhookAddr is the address of p's webhook port.
func podWebhookAddr(p corev1.Pod) string {
	return net.JoinHostPort(p.Status.PodIP, strconv.Itoa(webhookPort))
}

func podReady(p *corev1.Pod) bool {
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// servedLeaf is the leaf certificate addr serves. Only the certificate
// matters here, not whether it verifies: the load's Pods show that.
func servedLeaf(ctx context.Context, addr string) ([]byte, error) {
	ctx, cancel := context.WithTimeout(ctx, 3*time.Second)
	defer cancel()
	d := &tls.Dialer{Config: &tls.Config{InsecureSkipVerify: true}} //nolint:gosec // the certificate is compared, not trusted
	conn, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return nil, err
	}
	defer conn.Close()
	certs := conn.(*tls.Conn).ConnectionState().PeerCertificates
	if len(certs) == 0 {
		return nil, fmt.Errorf("%s served no certificate", addr)
	}
	return certs[0].Raw, nil
}

package stack

import (
	"bytes"
	"context"
	"crypto/tls"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"

	"github.com/kyma-project/kim-snatch/pkg/cabundle"
	"github.com/kyma-project/kim-snatch/test/e2e/projector"
	"github.com/kyma-project/kim-snatch/test/e2e/proxy"
	"github.com/kyma-project/kim-snatch/test/framework"
)

// ShutdownDelay is the replicas' --shutdown-delay: shorter than the
// Deployment's, as the proxy drops a stopping replica at once, where
// kube-proxy takes a while to learn of it.
const ShutdownDelay = 2 * time.Second

// startWebhooks projects the Secret into one cert dir per replica, starts
// the replicas and the proxy in front of them, and waits until the proxy
// routes to all of them.
func (s *Stack) startWebhooks(ctx, runCtx context.Context) error {
	n := s.opts.WebhookReplicas
	ports, err := framework.FreePorts(3*n + 1)
	if err != nil {
		return err
	}
	var dirs []string
	var backends []proxy.Backend
	for i := range n {
		name := fmt.Sprintf("%s-%d", WebhookName, i)
		dir := filepath.Join(s.opts.Dir, name, "certs")
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return err
		}
		dirs = append(dirs, dir)
		r := &Replica{
			Name: name, App: WebhookName, WebhookAddr: localAddr(ports[3*i]),
			MetricsAddr: localAddr(ports[3*i+1]), ProbeAddr: localAddr(ports[3*i+2]),
			path: s.webhookBin,
			args: []string{
				"--cert-dir=" + dir,
				fmt.Sprintf("--webhook-port=%d", ports[3*i]),
				"--metrics-bind-address=" + localAddr(ports[3*i+1]),
				"--health-probe-bind-address=" + localAddr(ports[3*i+2]),
				"--shutdown-delay=" + ShutdownDelay.String(),
			},
			logDir: s.opts.Dir,
			client: &http.Client{Timeout: 2 * time.Second},
		}
		s.Webhooks = append(s.Webhooks, r)
		backends = append(backends, proxy.Backend{Addr: localAddr(ports[3*i]), ReadyURL: "http://" + r.ProbeAddr + "/readyz"})
	}
	s.opts.Progress("projecting the Secret into %d webhook cert dirs (kubelet-style ..data swap, %s delay)", n, s.opts.ProjectorDelay)
	s.Projector = projector.New(s.Clientset, Namespace, SecretName, s.opts.ProjectorDelay, dirs...)
	if err := s.Projector.Start(runCtx); err != nil {
		return err
	}
	s.opts.Progress("starting %d snatch-webhook replicas behind a round-robin proxy on %s", n, localAddr(ports[3*n]))
	for _, r := range s.Webhooks {
		if err := r.Start(); err != nil {
			return err
		}
	}
	if s.Proxy, err = proxy.Start(localAddr(ports[3*n]), 100*time.Millisecond, backends...); err != nil {
		return err
	}
	return s.waitRouted(ctx, n)
}

// waitRouted waits until the proxy routes new connections to n replicas.
func (s *Stack) waitRouted(ctx context.Context, n int) error {
	for _, r := range s.Webhooks {
		if r.Running() {
			if err := r.WaitReady(ctx, time.Minute); err != nil {
				return err
			}
		}
	}
	err := wait.PollUntilContextTimeout(ctx, 50*time.Millisecond, 30*time.Second, true, func(context.Context) (bool, error) {
		return s.Proxy.Ready() == n, nil
	})
	if err != nil {
		return errorf("the proxy routes to %d webhook replicas, want %d: %w", s.Proxy.Ready(), n, err)
	}
	return nil
}

// WebhookURL is the URL the MutatingWebhookConfiguration calls.
func (s *Stack) WebhookURL() string {
	return "https://localhost:" + portOf(s.Proxy.Addr()) + "/mutate-pod"
}

// applyWebhookConfiguration renders deploy/webhook and creates its
// MutatingWebhookConfiguration with a url clientConfig that points at the
// proxy, since the local cluster has no Services. Everything else (rules,
// selectors, policy, timeout) is as shipped; the caBundle is left to the
// syncer.
func (s *Stack) applyWebhookConfiguration(ctx context.Context) error {
	mwc, err := RenderWebhookConfiguration()
	if err != nil {
		return err
	}
	url := s.WebhookURL()
	for i := range mwc.Webhooks {
		mwc.Webhooks[i].ClientConfig = admissionregistrationv1.WebhookClientConfig{URL: &url}
	}
	s.opts.Progress("creating MutatingWebhookConfiguration %s from deploy/webhook, calling %s", mwc.Name, url)
	_, err = s.Clientset.AdmissionregistrationV1().MutatingWebhookConfigurations().Create(ctx, mwc, metav1.CreateOptions{})
	return err
}

// RenderWebhookConfiguration renders deploy/webhook with kubectl kustomize
// and returns its MutatingWebhookConfiguration.
func RenderWebhookConfiguration() (*admissionregistrationv1.MutatingWebhookConfiguration, error) {
	out, err := kustomize("webhook")
	if err != nil {
		return nil, err
	}
	dec := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(out), 4096)
	for {
		var mwc admissionregistrationv1.MutatingWebhookConfiguration
		if err := dec.Decode(&mwc); err != nil {
			return nil, fmt.Errorf("no MutatingWebhookConfiguration in deploy/webhook: %w", err)
		}
		if mwc.Kind == "MutatingWebhookConfiguration" {
			return &mwc, nil
		}
	}
}

// RestartWebhook restarts replica i as a rolling update does: it leaves
// the Service's endpoints as it gets SIGTERM, keeps serving through its
// shutdown delay while the API server's kept-alive connections move away,
// drains, and a new process takes its place.
func (s *Stack) RestartWebhook(ctx context.Context, i int) error {
	r := s.Webhooks[i]
	s.Proxy.SetDraining(i, true)
	r.Stop()
	if code, _ := r.Process().Wait(5 * time.Second); code != 0 {
		return errorf("%s exited with code %d after SIGTERM; log:\n%s", r.Name, code, r.Process().LogTail(20))
	}
	if err := r.Start(); err != nil {
		return err
	}
	if err := r.WaitReady(ctx, time.Minute); err != nil {
		return err
	}
	s.Proxy.SetDraining(i, false)
	return s.waitRouted(ctx, len(s.Webhooks))
}

// StopWebhooks stops every webhook replica at once, and waits for them.
func (s *Stack) StopWebhooks() {
	for i := range s.Webhooks {
		s.Proxy.SetDraining(i, true)
	}
	stopAll(s.Webhooks)
}

// StartWebhooks starts the stopped webhook replicas again and waits until
// the proxy routes to all of them.
func (s *Stack) StartWebhooks(ctx context.Context) error {
	for i, r := range s.Webhooks {
		if !r.Running() {
			if err := r.Start(); err != nil {
				return err
			}
		}
		s.Proxy.SetDraining(i, false)
	}
	return s.waitRouted(ctx, len(s.Webhooks))
}

// ServedFingerprint returns the fingerprint of the certificate that
// replica r serves.
func (r *Replica) ServedFingerprint(ctx context.Context) (string, error) {
	d := tls.Dialer{Config: &tls.Config{InsecureSkipVerify: true, MinVersion: tls.VersionTLS12}} //nolint:gosec // reads the served certificate, trusts nothing
	c, err := d.DialContext(ctx, "tcp", r.WebhookAddr)
	if err != nil {
		return "", err
	}
	defer func() { _ = c.Close() }()
	certs := c.(*tls.Conn).ConnectionState().PeerCertificates
	if len(certs) == 0 {
		return "", errorf("%s served no certificate", r.Name)
	}
	return cabundle.Fingerprint(certs[0]), nil
}

// WaitServed waits until every running webhook replica serves the
// certificate with fingerprint fp.
func (s *Stack) WaitServed(ctx context.Context, timeout time.Duration, fp string) error {
	last := map[string]string{}
	err := wait.PollUntilContextTimeout(ctx, 50*time.Millisecond, timeout, true, func(ctx context.Context) (bool, error) {
		for _, r := range s.Webhooks {
			if !r.Running() {
				continue
			}
			got, err := r.ServedFingerprint(ctx)
			if err != nil {
				last[r.Name] = err.Error()
				return false, nil
			}
			last[r.Name] = got
			if got != fp {
				return false, nil
			}
		}
		return true, nil
	})
	if err != nil {
		return errorf("webhook replicas do not serve %s within %s (last: %v): %w", fp, timeout, last, err)
	}
	return nil
}

package stack

import (
	"context"
	"crypto/tls"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/kyma-project/kim-snatch/pkg/cabundle"
	"github.com/kyma-project/kim-snatch/test/e2e/projector"
	"github.com/kyma-project/kim-snatch/test/framework"
)

// ShutdownDelay is the replicas' --shutdown-delay: shorter than the
// Deployment's, as the stack marks a stopping replica's endpoint not Ready
// before it sends SIGTERM, where in a cluster the endpointslice controller
// and then the API server take a while to learn of it.
const ShutdownDelay = 2 * time.Second

// newWebhook returns a webhook replica that serves the certificate in
// certDir, on ports of its own.
func (s *Stack) newWebhook(name, certDir string) (*Replica, error) {
	ports, err := framework.FreePorts(3)
	if err != nil {
		return nil, err
	}
	return &Replica{
		Name: name, App: WebhookName, WebhookAddr: localAddr(ports[0]),
		MetricsAddr: localAddr(ports[1]), ProbeAddr: localAddr(ports[2]),
		path: s.webhookBin,
		args: []string{
			"--cert-dir=" + certDir,
			fmt.Sprintf("--webhook-port=%d", ports[0]),
			"--metrics-bind-address=" + localAddr(ports[1]),
			"--health-probe-bind-address=" + localAddr(ports[2]),
			"--shutdown-delay=" + ShutdownDelay.String(),
		},
		logDir: s.opts.Dir,
		client: &http.Client{Timeout: 2 * time.Second},
	}, nil
}

// startWebhooks projects the Secret into one cert dir per replica, starts
// the replicas with an EndpointSlice each, and waits until every slice
// holds a Ready endpoint.
func (s *Stack) startWebhooks(ctx, runCtx context.Context) error {
	n := s.opts.WebhookReplicas
	var dirs []string
	for i := range n {
		name := fmt.Sprintf("%s-%d", WebhookName, i)
		dir := filepath.Join(s.opts.Dir, name, "certs")
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return err
		}
		dirs = append(dirs, dir)
		r, err := s.newWebhook(name, dir)
		if err != nil {
			return err
		}
		s.Webhooks = append(s.Webhooks, r)
	}
	s.opts.Progress("projecting the Secret into %d webhook cert dirs (kubelet-style ..data swap, %s delay)", n, s.opts.ProjectorDelay)
	s.Projector = projector.New(s.Clientset, Namespace, SecretName, s.opts.ProjectorDelay, dirs...)
	if err := s.Projector.Start(runCtx); err != nil {
		return err
	}
	s.opts.Progress("starting %d snatch-webhook replicas, each with an EndpointSlice of Service %s (address %s, Ready as /readyz answers)",
		n, ServiceName, EndpointAddress)
	for _, r := range s.Webhooks {
		if err := r.Start(); err != nil {
			return err
		}
		if err := s.endpoints.add(ctx, r); err != nil {
			return err
		}
	}
	go s.endpoints.run(runCtx)
	return s.waitRouted(ctx, s.Webhooks...)
}

// waitRouted waits until each running replica of rs answers /readyz and
// its EndpointSlice holds it Ready.
func (s *Stack) waitRouted(ctx context.Context, rs ...*Replica) error {
	for _, r := range rs {
		if !r.Running() {
			continue
		}
		if err := r.WaitReady(ctx, time.Minute); err != nil {
			return err
		}
		err := wait.PollUntilContextTimeout(ctx, 20*time.Millisecond, 30*time.Second, true, func(context.Context) (bool, error) {
			return s.endpoints.ready(r), nil
		})
		if err != nil {
			return errorf("the EndpointSlice of %s holds no Ready endpoint: %w", r.Name, err)
		}
	}
	return nil
}

// applyWebhookConfiguration creates the MutatingWebhookConfiguration of
// deploy/webhook as rendered: its service clientConfig names the Service,
// and the caBundle is left to the syncer.
func (s *Stack) applyWebhookConfiguration(ctx context.Context) error {
	mwc := s.manifests.Configuration.DeepCopy()
	s.opts.Progress("creating MutatingWebhookConfiguration %s from deploy/webhook; the API server calls Service %s/%s through its EndpointSlices",
		mwc.Name, Namespace, ServiceName)
	_, err := s.Clientset.AdmissionregistrationV1().MutatingWebhookConfigurations().Create(ctx, mwc, metav1.CreateOptions{})
	return err
}

// RestartWebhook restarts replica i as a rolling update does: its
// endpoint turns not Ready as it gets SIGTERM, it keeps serving through
// its shutdown delay while the API server's kept-alive connections move
// away, drains, and a new process takes its place.
func (s *Stack) RestartWebhook(ctx context.Context, i int) error {
	return s.restartWebhook(ctx, s.Webhooks[i], nil)
}

// SetWebhookArgs rolls every webhook replica, one after another, to start
// with extra after the stack's own arguments, where a repeated flag wins;
// nil rolls them back. Each replica's Pod object is replaced, as a rollout
// replaces Pods, so that its container args show the new flags.
func (s *Stack) SetWebhookArgs(ctx context.Context, extra []string) error {
	for _, r := range s.Webhooks {
		if err := s.restartWebhook(ctx, r, func() error {
			r.mu.Lock()
			r.extra = append([]string(nil), extra...)
			r.mu.Unlock()
			return s.pods.remove(ctx, r)
		}); err != nil {
			return err
		}
	}
	return nil
}

// restartWebhook restarts r, calling change, when not nil, between the
// old process and the new.
func (s *Stack) restartWebhook(ctx context.Context, r *Replica, change func() error) error {
	if err := s.endpoints.setStopping(ctx, r, true); err != nil {
		return err
	}
	r.Stop()
	if code, _ := r.Process().Wait(5 * time.Second); code != 0 {
		return errorf("%s exited with code %d after SIGTERM; log:\n%s", r.Name, code, r.Process().LogTail(20))
	}
	if change != nil {
		if err := change(); err != nil {
			return err
		}
	}
	if err := r.Start(); err != nil {
		return err
	}
	if err := r.WaitReady(ctx, time.Minute); err != nil {
		return err
	}
	if err := s.endpoints.setStopping(ctx, r, false); err != nil {
		return err
	}
	return s.waitRouted(ctx, s.Webhooks...)
}

// StopWebhooks stops every webhook replica at once, and waits for them.
func (s *Stack) StopWebhooks() {
	for _, r := range s.Webhooks {
		_ = s.endpoints.setStopping(context.Background(), r, true)
	}
	stopAll(s.Webhooks)
}

// StartWebhooks starts the stopped webhook replicas again and waits until
// their endpoints are Ready.
func (s *Stack) StartWebhooks(ctx context.Context) error {
	for _, r := range s.Webhooks {
		if !r.Running() {
			if err := r.Start(); err != nil {
				return err
			}
		}
		if err := s.endpoints.setStopping(ctx, r, false); err != nil {
			return err
		}
	}
	return s.waitRouted(ctx, s.Webhooks...)
}

// AddWebhook starts one more webhook replica, named name, that serves the
// certificate in certDir (tls.crt and tls.key; the projector does not
// write there), with an EndpointSlice and a Pod object of its own, and
// waits until its endpoint is Ready. It is not one of s.Webhooks: the
// scenarios' restarts and rotations leave it alone. The API server dials
// it like any Ready endpoint, for new connections only: connections it
// keeps alive to the other replicas stay where they are. A certificate
// from another CA in certDir makes the calls on its connections fail open.
func (s *Stack) AddWebhook(ctx context.Context, name, certDir string) (*Replica, error) {
	r, err := s.newWebhook(name, certDir)
	if err != nil {
		return nil, err
	}
	if err := r.Start(); err != nil {
		return nil, err
	}
	s.mu.Lock()
	s.extra = append(s.extra, r)
	s.mu.Unlock()
	if err := s.endpoints.add(ctx, r); err != nil {
		return r, err
	}
	return r, s.waitRouted(ctx, r)
}

// RemoveWebhook removes a replica that AddWebhook started: its endpoint
// turns not Ready, the process stops, and its EndpointSlice and Pod
// object go.
func (s *Stack) RemoveWebhook(ctx context.Context, r *Replica) error {
	if err := s.endpoints.setStopping(ctx, r, true); err != nil {
		return err
	}
	r.Stop()
	s.mu.Lock()
	for i, x := range s.extra {
		if x == r {
			s.extra = append(s.extra[:i], s.extra[i+1:]...)
			break
		}
	}
	s.mu.Unlock()
	if err := s.endpoints.remove(ctx, r); err != nil {
		return err
	}
	return s.pods.remove(ctx, r)
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

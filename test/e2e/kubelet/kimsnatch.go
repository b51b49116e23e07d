package kubelet

import (
	"context"
	"crypto/tls"
	"errors"
	"net"
	"net/http"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/kyma-project/kim-snatch/test/e2e/kimsnatch"
)

// KimSnatchImage is the image name of the old kim-snatch's container,
// which KimSnatch runs.
const KimSnatchImage = "kim-snatch"

// KimSnatchOptions configure the Runtime of the old kim-snatch; see
// KimSnatch.
type KimSnatchOptions struct {
	// RestartDelay is kimsnatch.Options.RestartDelay.
	RestartDelay time.Duration
	// Started, when set, is called with each stand-in started, for tests
	// that inspect it.
	Started func(c *Container, k *kimsnatch.KimSnatch)
}

// KimSnatch returns a Runtime that runs the old kim-snatch's container of
// test/e2e/kimsnatch's installation in the test process, with
// kimsnatch.Start. It takes from the container:
//
//   - the certificate directory from its first Secret volume mount (the
//     old Deployment mounts kim-snatch-certificates at /tmp);
//   - the webhook address from the container port named webhook-server,
//     else the first declared one (9443);
//   - --kyma-worker-pool-name and --webhook-cfg-name from its args;
//   - the client of the Pod's ServiceAccount, so that the old
//     installation's RBAC applies, which needs the token mounted.
//
// At --health-probe-bind-address it serves /healthz, which answers 200,
// and /readyz, which answers 200 while a TLS handshake with the webhook
// port succeeds: the old binary served TLS only once it had written the
// caBundle after each start, and a restarted binary was not running at
// all, so its readiness followed the same. The stand-in's own restarts
// after a failed write (kimsnatch.KimSnatch.Restarts) happen inside the
// container: they do not count in the Pod's restartCount.
//
// KimSnatch runs it with the zero KimSnatchOptions, KimSnatchOptions.Runtime
// with others.
func KimSnatch() Runtime { return KimSnatchOptions{}.Runtime() }

// Runtime returns the Runtime of the old kim-snatch with o; see KimSnatch.
func (o KimSnatchOptions) Runtime() Runtime {
	return Func(func(ctx context.Context, c *Container) (Running, error) {
		if c.Client == nil {
			return nil, errors.New("kim-snatch needs its ServiceAccount token mounted")
		}
		opts := kimsnatch.Options{Client: c.Client, RestartDelay: o.RestartDelay}
		for _, vm := range c.Spec.VolumeMounts {
			for _, v := range c.Pod.Spec.Volumes {
				if v.Name == vm.Name && v.Secret != nil && opts.CertDir == "" {
					opts.CertDir = c.Mounts[vm.MountPath]
				}
			}
		}
		if opts.CertDir == "" {
			return nil, errors.New("kim-snatch needs a Secret volume with its certificate")
		}
		webhookPort := intstr.FromString("webhook-server")
		if _, ok := c.Port(webhookPort); !ok && len(c.Spec.Ports) > 0 {
			webhookPort = intstr.FromInt32(c.Spec.Ports[0].ContainerPort)
		}
		if opts.Addr = c.Addr(webhookPort); opts.Addr == "" {
			return nil, errors.New("kim-snatch declares no webhook port")
		}
		var healthAddr string
		for _, a := range c.Args {
			flag, value, _ := strings.Cut(strings.TrimLeft(a, "-"), "=")
			switch flag {
			case "kyma-worker-pool-name":
				opts.WorkerPool = value
			case "webhook-cfg-name":
				opts.WebhookConfigName = value
			case "health-probe-bind-address":
				healthAddr = value
			}
		}
		k, err := kimsnatch.Start(ctx, opts)
		if err != nil {
			return nil, err
		}
		var health *http.Server
		if healthAddr != "" && healthAddr != "0" {
			ln, err := net.Listen("tcp", healthAddr)
			if err != nil {
				k.Stop()
				return nil, err
			}
			mux := http.NewServeMux()
			mux.HandleFunc("/healthz", func(http.ResponseWriter, *http.Request) {})
			mux.HandleFunc("/readyz", func(w http.ResponseWriter, r *http.Request) {
				d := &tls.Dialer{Config: &tls.Config{InsecureSkipVerify: true}} //nolint:gosec // only the handshake matters
				conn, err := d.DialContext(r.Context(), "tcp", k.Addr())
				if err != nil {
					http.Error(w, "not serving: "+err.Error(), http.StatusServiceUnavailable)
					return
				}
				_ = conn.Close()
			})
			health = &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
			go func() { _ = health.Serve(ln) }()
		}
		if o.Started != nil {
			o.Started(c, k)
		}
		return NewInProcess(func(time.Duration) int {
			if health != nil {
				_ = health.Close()
			}
			k.Stop()
			return 0
		}), nil
	})
}

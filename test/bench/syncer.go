package bench

import (
	"bytes"
	"context"
	"fmt"
	"slices"
	"strconv"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"

	"github.com/kyma-project/kim-snatch/pkg/certtest"
	"github.com/kyma-project/kim-snatch/pkg/syncer"
	"github.com/kyma-project/kim-snatch/pkg/syncer/syncertest"
	"github.com/kyma-project/kim-snatch/test/framework"
	"github.com/kyma-project/kim-snatch/test/process"
)

// The syncer's defaults: the Secret it reads and the configuration it
// writes.
const (
	syncerNamespace = syncer.DefaultNamespace
	syncerSecret    = syncer.DefaultSecretName
)

var syncerWebhooks = []string{"pods.kim-snatch.kyma-project.io", "pods-legacy.kim-snatch.kyma-project.io"}

// seen is an object received through a watch, and when.
type seen struct {
	at  time.Time
	obj runtime.Object
}

// syncerSection measures the cabundle-syncer binary's Secret-to-caBundle
// propagation against a plain watch on the Secret, and its memory with and
// without many unrelated Secrets.
func (r *runner) syncerSection(ctx context.Context) error {
	bin, err := process.Build(ctx, "cabundle-syncer", r.dir)
	if err != nil {
		return err
	}
	cluster, cs, err := r.startControlPlane(ctx, framework.Options{})
	if err != nil {
		return err
	}
	ca0, err := seedSyncer(ctx, cs)
	if err != nil {
		return err
	}
	// Watches started before any rotation, so that each receipt time is the
	// moment the write reached a watcher.
	watchCtx, stopWatches := context.WithCancel(ctx)
	defer stopWatches()
	secretSeen, mwcSeen, err := startWatches(watchCtx, cs)
	if err != nil {
		return err
	}
	p, _, err := r.startReady(ctx, "cabundle-syncer", bin, -1,
		"--kubeconfig="+cluster.KubeconfigPath, "--leader-elect=false", "--metrics-secure=false")
	if err != nil {
		return err
	}
	if _, err := waitBundle(ctx, mwcSeen, ca0); err != nil {
		return err
	}

	res := &SyncerResults{Rotations: r.cfg.Rotations, UnrelatedSecrets: r.cfg.UnrelatedSecrets, SecretSize: r.cfg.SecretSize}
	rss0, err := settledRSS(ctx, p, r.cfg.Settle)
	if err != nil {
		return err
	}
	if err := framework.CreateSecrets(ctx, cs, syncerNamespace, r.cfg.UnrelatedSecrets, r.cfg.SecretSize); err != nil {
		return err
	}
	// The syncer is alive among them: one rotation, not measured.
	if _, _, err := rotate(ctx, cs, secretSeen, mwcSeen, "ca-warm"); err != nil {
		return err
	}
	rss1, err := settledRSS(ctx, p, r.cfg.Settle)
	if err != nil {
		return err
	}
	res.RSSMiB = figure(mib(rss1), mib(rss0))
	r.progress("syncer RSS %.1f MiB with no other Secrets, %.1f MiB with %d of %d KiB", mib(rss0), mib(rss1), r.cfg.UnrelatedSecrets, r.cfg.SecretSize>>10)

	if err := r.measurePropagation(ctx, cs, secretSeen, mwcSeen, res); err != nil {
		return err
	}
	r.res.Syncer = res
	return nil
}

// startWatches watches the Secret and the webhook configuration.
func startWatches(ctx context.Context, cs kubernetes.Interface) (secretSeen, mwcSeen <-chan seen, err error) {
	byName := func(name string) metav1.ListOptions {
		return metav1.ListOptions{FieldSelector: fields.OneTermEqualSelector("metadata.name", name).String()}
	}
	if secretSeen, err = watchStamped(cs.CoreV1().Secrets(syncerNamespace).Watch(ctx, byName(syncerSecret))); err != nil {
		return nil, nil, err
	}
	mwcSeen, err = watchStamped(cs.AdmissionregistrationV1().MutatingWebhookConfigurations().Watch(ctx, byName(mwcName)))
	return secretSeen, mwcSeen, err
}

// seedSyncer creates the syncer's namespace, the webhook configuration and
// the Secret with a first CA, which it returns.
func seedSyncer(ctx context.Context, cs kubernetes.Interface) (*certtest.Cert, error) {
	if err := syncertest.CreateNamespace(ctx, cs, syncerNamespace); err != nil {
		return nil, err
	}
	if _, err := syncertest.CreateWebhookConfiguration(ctx, cs, syncertest.WebhookConfiguration(mwcName, syncerWebhooks...)); err != nil {
		return nil, err
	}
	ca0, err := certtest.NewCA(certtest.Options{CommonName: "ca-0"})
	if err != nil {
		return nil, err
	}
	secrets := cs.CoreV1().Secrets(syncerNamespace)
	if _, err := secrets.Create(ctx, syncertest.CertSecret(syncerNamespace, syncerSecret, "ca.crt", ca0.CertPEM), metav1.CreateOptions{}); err != nil {
		return nil, err
	}
	return ca0, nil
}

// measurePropagation rotates the CA cfg.Rotations times and sets res's
// propagation figures: the caBundle against the plain watch on the Secret.
func (r *runner) measurePropagation(ctx context.Context, cs kubernetes.Interface, secretSeen, mwcSeen <-chan seen, res *SyncerResults) error {
	var toSecret, toBundle []time.Duration
	for i := 1; i <= r.cfg.Rotations; i++ {
		s, b, err := rotate(ctx, cs, secretSeen, mwcSeen, "ca-"+strconv.Itoa(i))
		if err != nil {
			return fmt.Errorf("rotation %d: %w", i, err)
		}
		toSecret, toBundle = append(toSecret, s), append(toBundle, b)
	}
	slices.Sort(toSecret)
	slices.Sort(toBundle)
	res.Samples = len(toBundle)
	res.PropagationP50Ms = figure(ms(percentile(toBundle, 50)), ms(percentile(toSecret, 50)))
	res.PropagationP99Ms = figure(ms(percentile(toBundle, 99)), ms(percentile(toSecret, 99)))
	res.PropagationMaxMs = ms(toBundle[len(toBundle)-1])
	r.progress("%d rotations: caBundle visible p50 %.1f ms p99 %.1f ms; Secret watch p50 %.1f ms p99 %.1f ms",
		len(toBundle), res.PropagationP50Ms.Value, res.PropagationP99Ms.Value, res.PropagationP50Ms.Baseline, res.PropagationP99Ms.Baseline)
	return nil
}

// rotate writes a new CA into the Secret and returns how long it took the
// plain watch to see the write and the caBundle of every webhook entry to
// hold the new CA.
func rotate(ctx context.Context, cs kubernetes.Interface, secretSeen, mwcSeen <-chan seen, name string) (time.Duration, time.Duration, error) {
	ca, err := certtest.NewCA(certtest.Options{CommonName: name})
	if err != nil {
		return 0, 0, err
	}
	secret := syncertest.CertSecret(syncerNamespace, syncerSecret, "ca.crt", ca.CertPEM)
	start := time.Now()
	if _, err := cs.CoreV1().Secrets(syncerNamespace).Update(ctx, secret, metav1.UpdateOptions{}); err != nil {
		return 0, 0, err
	}
	secretAt, err := waitFor(ctx, secretSeen, func(o runtime.Object) bool {
		return bytes.Equal(o.(*corev1.Secret).Data["ca.crt"], ca.CertPEM)
	})
	if err != nil {
		return 0, 0, fmt.Errorf("the Secret watch: %w", err)
	}
	bundleAt, err := waitBundle(ctx, mwcSeen, ca)
	if err != nil {
		return 0, 0, err
	}
	return secretAt.Sub(start), bundleAt.Sub(start), nil
}

func waitBundle(ctx context.Context, mwcSeen <-chan seen, ca *certtest.Cert) (time.Time, error) {
	fp := ca.Fingerprint()
	at, err := waitFor(ctx, mwcSeen, func(o runtime.Object) bool {
		return syncertest.EveryBundleHas(o.(*admissionregistrationv1.MutatingWebhookConfiguration), fp)
	})
	if err != nil {
		return at, fmt.Errorf("the caBundle: %w", err)
	}
	return at, nil
}

// waitFor returns when ok first holds for an object from ch.
func waitFor(ctx context.Context, ch <-chan seen, ok func(runtime.Object) bool) (time.Time, error) {
	timeout := time.After(30 * time.Second)
	for {
		select {
		case s, open := <-ch:
			if !open {
				return time.Time{}, fmt.Errorf("the watch ended")
			}
			if ok(s.obj) {
				return s.at, nil
			}
		case <-timeout:
			return time.Time{}, fmt.Errorf("not seen within 30s")
		case <-ctx.Done():
			return time.Time{}, ctx.Err()
		}
	}
}

// watchStamped passes the object of each Added or Modified event of w,
// stamped with its receipt time, to the returned channel; the first events
// are the current state. The channel closes when the watch ends.
func watchStamped(w watch.Interface, err error) (<-chan seen, error) {
	if err != nil {
		return nil, err
	}
	ch := make(chan seen, 1024)
	go func() {
		defer close(ch)
		for ev := range w.ResultChan() {
			if ev.Type == watch.Added || ev.Type == watch.Modified {
				ch <- seen{at: time.Now(), obj: ev.Object}
			}
		}
	}()
	return ch, nil
}

// settledRSS waits d, then reads the resident set of p.
func settledRSS(ctx context.Context, p *process.Process, d time.Duration) (int64, error) {
	select {
	case <-ctx.Done():
		return 0, ctx.Err()
	case <-time.After(d):
	}
	if p.Exited() {
		return 0, fmt.Errorf("%s exited: %v; log:\n%s", p.Name, p.WaitErr(), p.LogTail(20))
	}
	return p.RSS()
}

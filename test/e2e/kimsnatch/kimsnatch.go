package kimsnatch

import (
	"bytes"
	"cmp"
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/util/retry"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"
)

const pollInterval = 100 * time.Millisecond

// Options configure the stand-in as the old binary's flags and mounts did.
type Options struct {
	Client kubernetes.Interface
	// CertDir holds tls.crt, tls.key and ca.crt, as the Secret volume
	// mounted at /tmp did.
	CertDir string
	// Addr is the listen address; 127.0.0.1:0 if empty.
	Addr string
	// WebhookConfigName is --webhook-cfg-name.
	WebhookConfigName string
	// WorkerPool is --kyma-worker-pool-name.
	WorkerPool string
	// RestartDelay is how long the stand-in stays down after a failed
	// apply, as the old Pod did between its exit and its restart; 1s if 0.
	RestartDelay time.Duration
}

// KimSnatch is a running stand-in. It does what the old binary did:
//
//   - At start it lists the Nodes of the Kyma worker pool. With at least
//     one, it appends a preferred node affinity term (weight 10,
//     worker.gardener.cloud/pool In [pool]) to every Pod the API server
//     sends it on /mutate--v1-pod, unconditionally, also to a Pod that
//     already has one; Pods in kube-system are left alone. With none, it
//     annotates every Pod with worker.gardener.cloud/pool=<pool> instead.
//   - It serves HTTPS with the certificate in its certificate directory
//     (tls.crt, tls.key, ca.crt, mounted from the Secret
//     kim-snatch-certificates) and follows changes of tls.crt and tls.key.
//   - On every certificate load it reads ca.crt, gets the
//     MutatingWebhookConfiguration, sets every entry's caBundle to ca.crt
//     alone and, if any entry changed, applies the whole object it read
//     with server-side apply, field manager "snatch", Force. It does not
//     create the object: that is the installation's (Inventory). When this
//     fails the old binary exited and was restarted; the stand-in stops
//     serving and, after Options.RestartDelay, lists the Nodes and loads
//     the certificate again, as the restarted binary did. It serves only
//     once the first write after a start or restart has succeeded.
type KimSnatch struct {
	o      Options
	ln     net.Listener
	srv    *http.Server
	cancel context.CancelFunc
	wg     sync.WaitGroup

	mu                       sync.Mutex
	fallback                 bool             // term or annotation
	cert                     *tls.Certificate // served; nil while down
	leaf, key                []byte           // of the last load
	loads, applies, restarts int
	reviews                  int // begun
	downUntil                time.Time
}

// Start lists the Kyma pool's Nodes, listens, loads the certificate if
// CertDir holds one, and follows CertDir until Stop. Until a certificate
// is loaded and the MWC written, every TLS handshake fails.
func Start(ctx context.Context, o Options) (*KimSnatch, error) {
	if o.Client == nil || o.CertDir == "" {
		return nil, errors.New("kimsnatch: Client and CertDir are required")
	}
	o.Addr = cmp.Or(o.Addr, "127.0.0.1:0")
	o.WebhookConfigName = cmp.Or(o.WebhookConfigName, DefaultWebhookConfigName)
	o.WorkerPool = cmp.Or(o.WorkerPool, DefaultWorkerPool)
	o.RestartDelay = cmp.Or(o.RestartDelay, time.Second)
	k := &KimSnatch{o: o}
	if err := k.listNodes(ctx); err != nil {
		return nil, err
	}
	var err error
	if k.ln, err = net.Listen("tcp", o.Addr); err != nil {
		return nil, err
	}
	mux := http.NewServeMux()
	webhook := &admission.Webhook{
		Handler:        admission.HandlerFunc(k.admit),
		LogConstructor: func(logr.Logger, *admission.Request) logr.Logger { return logr.Discard() },
	}
	mux.HandleFunc(Path, func(w http.ResponseWriter, r *http.Request) {
		k.mu.Lock()
		k.reviews++
		k.mu.Unlock()
		webhook.ServeHTTP(w, r)
	})
	k.srv = &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second, ErrorLog: log.New(io.Discard, "", 0)}
	// The old binary disabled HTTP/2 unless --enable-http2 was given.
	tlsCfg := &tls.Config{MinVersion: tls.VersionTLS12, NextProtos: []string{"http/1.1"}, GetCertificate: k.getCertificate}
	ctx, k.cancel = context.WithCancel(context.WithoutCancel(ctx))
	k.load(ctx)
	k.wg.Add(2)
	go func() { defer k.wg.Done(); _ = k.srv.Serve(tls.NewListener(k.ln, tlsCfg)) }()
	go func() { defer k.wg.Done(); wait.UntilWithContext(ctx, k.load, pollInterval) }()
	return k, nil
}

// listNodes decides, as the old binary did at its start, between the term
// and the annotation.
func (k *KimSnatch) listNodes(ctx context.Context) error {
	nodes, err := k.o.Client.CoreV1().Nodes().List(ctx, metav1.ListOptions{LabelSelector: PoolLabel + "=" + k.o.WorkerPool})
	if err != nil {
		return fmt.Errorf("kimsnatch: list nodes: %w", err)
	}
	k.mu.Lock()
	k.fallback = len(nodes.Items) == 0
	k.mu.Unlock()
	return nil
}

// Addr is the address the stand-in listens on.
func (k *KimSnatch) Addr() string { return k.ln.Addr().String() }

// shutdownTimeout bounds Stop's drain, as the old binary's webhook server,
// controller-runtime's, bounded its own.
const shutdownTimeout = time.Minute

// Stop stops following CertDir and shuts the server down as the old
// binary's webhook server did on SIGTERM: it closes the listener and the
// idle connections at once and answers the reviews in flight, for up to
// shutdownTimeout. The API server's keep-alive connections that reached
// the Pod through its Service before a selector change still carry calls
// to it (docs/migration.md, "The versions"): those in flight are answered.
func (k *KimSnatch) Stop() {
	k.cancel()
	ctx, cancel := context.WithTimeout(context.Background(), shutdownTimeout)
	defer cancel()
	if err := k.srv.Shutdown(ctx); err != nil {
		_ = k.srv.Close()
	}
	k.wg.Wait()
}

// Fallback reports whether no Node of the pool existed at start, so that
// Pods are annotated instead of getting the term.
func (k *KimSnatch) Fallback() bool { k.mu.Lock(); defer k.mu.Unlock(); return k.fallback }

// Serving reports whether a certificate is loaded and the MWC written
// after the last start or restart: whether TLS handshakes succeed.
func (k *KimSnatch) Serving() bool { k.mu.Lock(); defer k.mu.Unlock(); return k.cert != nil }

// Loads is the number of certificate loads so far.
func (k *KimSnatch) Loads() int { k.mu.Lock(); defer k.mu.Unlock(); return k.loads }

// Reviews is the number of reviews whose handling has begun so far.
func (k *KimSnatch) Reviews() int { k.mu.Lock(); defer k.mu.Unlock(); return k.reviews }

// Applies is the number of successful forced applies of the MWC so far. A
// load after which every caBundle already held ca.crt applies nothing.
func (k *KimSnatch) Applies() int { k.mu.Lock(); defer k.mu.Unlock(); return k.applies }

// Restarts is the number of failed loads, each of which made the old
// binary exit.
func (k *KimSnatch) Restarts() int { k.mu.Lock(); defer k.mu.Unlock(); return k.restarts }

func (k *KimSnatch) getCertificate(*tls.ClientHelloInfo) (*tls.Certificate, error) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.cert == nil {
		return nil, errors.New("kimsnatch: no certificate loaded")
	}
	return k.cert, nil
}

// load reads the key pair and, if it differs from the last one loaded (the
// certificate watcher compares the leaf and the key), counts a load and
// writes the MWC. At start, and after a restart, the old binary served
// only once that write had succeeded; on a later load it served the new
// certificate at once and wrote the MWC meanwhile.
func (k *KimSnatch) load(ctx context.Context) {
	certPEM, err1 := os.ReadFile(filepath.Join(k.o.CertDir, "tls.crt"))
	keyPEM, err2 := os.ReadFile(filepath.Join(k.o.CertDir, "tls.key"))
	if err1 != nil || err2 != nil {
		return
	}
	pair, err := tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		return
	}
	k.mu.Lock()
	down := k.cert == nil
	if (!down && bytes.Equal(k.leaf, pair.Certificate[0]) && bytes.Equal(k.key, keyPEM)) || time.Now().Before(k.downUntil) {
		k.mu.Unlock()
		return
	}
	restarting := down && k.restarts > 0
	k.loads++
	k.leaf, k.key = pair.Certificate[0], keyPEM
	if !down {
		k.cert = &pair
	}
	k.mu.Unlock()

	var applied bool
	if restarting {
		err = k.listNodes(ctx) // a new process
	}
	if err == nil {
		applied, err = k.writeCABundle(ctx)
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	switch {
	case err != nil && ctx.Err() == nil:
		k.cert = nil
		k.restarts++
		k.downUntil = time.Now().Add(k.o.RestartDelay)
	case err == nil:
		k.cert = &pair
		if applied {
			k.applies++
		}
	}
}

// writeCABundle sets every entry's caBundle to ca.crt and force-applies the
// whole object read, retrying on conflicts, as the old callback did.
func (k *KimSnatch) writeCABundle(ctx context.Context) (applied bool, err error) {
	ca, err := os.ReadFile(filepath.Join(k.o.CertDir, "ca.crt"))
	if err != nil {
		return false, err
	}
	mwcs := k.o.Client.AdmissionregistrationV1().MutatingWebhookConfigurations()
	err = retry.RetryOnConflict(retry.DefaultBackoff, func() error {
		ctx, cancel := context.WithTimeout(ctx, 10*time.Second) // 5s for each call in the old binary
		defer cancel()
		mwc, err := mwcs.Get(ctx, k.o.WebhookConfigName, metav1.GetOptions{})
		if err != nil {
			return err
		}
		changed := false
		for i := range mwc.Webhooks {
			if !bytes.Equal(mwc.Webhooks[i].ClientConfig.CABundle, ca) {
				mwc.Webhooks[i].ClientConfig.CABundle, changed = ca, true
			}
		}
		if !changed {
			return nil
		}
		mwc.APIVersion, mwc.Kind = "admissionregistration.k8s.io/v1", "MutatingWebhookConfiguration"
		mwc.ManagedFields = nil
		body, err := json.Marshal(mwc)
		if err != nil {
			return err
		}
		_, err = mwcs.Patch(ctx, mwc.Name, types.ApplyPatchType, body,
			metav1.PatchOptions{FieldManager: FieldManager, Force: ptr.To(true)})
		applied = err == nil
		return err
	})
	return applied, err
}

// admit annotates the Pod in the fallback, and else appends the term,
// whatever terms the Pod has, outside kube-system. As the old binary's
// controller-runtime webhook did, it returns the difference between the
// Pod it was sent and the Pod changed as its patch.
func (k *KimSnatch) admit(_ context.Context, req admission.Request) admission.Response {
	var pod corev1.Pod
	if err := json.Unmarshal(req.Object.Raw, &pod); err != nil {
		return admission.Errored(http.StatusBadRequest, err)
	}
	switch {
	case k.Fallback():
		metav1.SetMetaDataAnnotation(&pod.ObjectMeta, PoolLabel, k.o.WorkerPool)
	case pod.Namespace == metav1.NamespaceSystem:
		return admission.Allowed("")
	default:
		if pod.Spec.Affinity == nil {
			pod.Spec.Affinity = &corev1.Affinity{}
		}
		if pod.Spec.Affinity.NodeAffinity == nil {
			pod.Spec.Affinity.NodeAffinity = &corev1.NodeAffinity{}
		}
		na := pod.Spec.Affinity.NodeAffinity
		na.PreferredDuringSchedulingIgnoredDuringExecution = append(na.PreferredDuringSchedulingIgnoredDuringExecution,
			corev1.PreferredSchedulingTerm{Weight: 10, Preference: corev1.NodeSelectorTerm{MatchExpressions: []corev1.NodeSelectorRequirement{
				{Key: PoolLabel, Operator: corev1.NodeSelectorOpIn, Values: []string{k.o.WorkerPool}},
			}}})
	}
	mutated, err := json.Marshal(&pod)
	if err != nil {
		return admission.Errored(http.StatusInternalServerError, err)
	}
	return admission.PatchResponseFromRaw(req.Object.Raw, mutated)
}

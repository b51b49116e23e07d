package certmgmt

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"
	metav1ac "k8s.io/client-go/applyconfigurations/meta/v1"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/dynamic/dynamicinformer"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"
)

// problem is why a Certificate cannot be issued, its state Error. Unless the
// Certificate changes, only a retryable one (a missing Issuer) is retried.
type problem struct {
	msg   string
	retry bool
}

func (p *problem) Error() string { return p.msg }

// Controller issues Certificates of selfSigned Issuers into their Secrets: a
// new spec generation, a missing Secret or key, or spec.renew: true issue a
// self-signed CA certificate with a new ECDSA P-256 key for spec.dnsNames,
// which must not repeat commonName ("duplicate domain"), with commonName as
// the subject's common name. Renewal by time, ACME and CA issuers are not
// served.
type Controller struct {
	dyn     dynamic.Interface
	cs      kubernetes.Interface
	factory dynamicinformer.DynamicSharedInformerFactory
	queue   workqueue.TypedRateLimitingInterface[string]
	mu      sync.Mutex // one sync at a time: the worker's or Renew's
}

// NewController builds a controller for the cluster of cfg.
func NewController(cfg *rest.Config) (*Controller, error) {
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	limiter := workqueue.NewTypedItemExponentialFailureRateLimiter[string](100*time.Millisecond, 5*time.Second)
	// Every resync checks each Certificate's Secret again, so that a Secret
	// deleted or emptied is written again within 5 seconds.
	c := &Controller{dyn: dyn, cs: cs, factory: dynamicinformer.NewDynamicSharedInformerFactory(dyn, 5*time.Second),
		queue: workqueue.NewTypedRateLimitingQueue(limiter)}
	enqueue := func(obj any) {
		if key, err := cache.MetaNamespaceKeyFunc(obj); err == nil {
			c.queue.Add(key)
		}
	}
	_, err = c.factory.ForResource(CertificateResource).Informer().AddEventHandler(
		cache.ResourceEventHandlerFuncs{AddFunc: enqueue, UpdateFunc: func(_, o any) { enqueue(o) }})
	return c, err
}

// Start starts the informers and the worker and returns once the informers
// have synced. The controller runs until ctx ends.
func (c *Controller) Start(ctx context.Context) error {
	c.factory.Start(ctx.Done())
	for gvr, ok := range c.factory.WaitForCacheSync(ctx.Done()) {
		if !ok {
			return fmt.Errorf("informer for %s not synced", gvr.Resource)
		}
	}
	context.AfterFunc(ctx, c.queue.ShutDown)
	go func() {
		for key, quit := c.queue.Get(); !quit; key, quit = c.queue.Get() {
			var p *problem
			if err := c.sync(ctx, key, false); err == nil || errors.As(err, &p) && !p.retry {
				c.queue.Forget(key)
			} else {
				utilruntime.HandleError(fmt.Errorf("certificate %s: %w", key, err))
				c.queue.AddRateLimited(key)
			}
			c.queue.Done(key)
		}
	}()
	return nil
}

// Renew issues the Certificate again now, and returns once its Secret and
// status are written.
func (c *Controller) Renew(ctx context.Context, namespace, name string) error {
	return c.sync(ctx, namespace+"/"+name, true)
}

// Writers returns the Certificates (namespace/name), sorted, whose spec
// names the Secret: cert-management writes it for each of them.
func (c *Controller) Writers(ctx context.Context, secretNamespace, secretName string) ([]string, error) {
	list, err := c.dyn.Resource(CertificateResource).List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, err
	}
	var writers []string
	for i := range list.Items {
		crt, err := parse(&list.Items[i])
		if ns, name := crt.secret(); err == nil && ns == secretNamespace && name == secretName {
			writers = append(writers, crt.Namespace+"/"+crt.Name)
		}
	}
	slices.Sort(writers)
	return writers, nil
}

func (c *Controller) sync(ctx context.Context, key string, force bool) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	ns, name, _ := cache.SplitMetaNamespaceKey(key)
	certs := c.dyn.Resource(CertificateResource).Namespace(ns)
	u, err := certs.Get(ctx, name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) && !force {
		return nil
	} else if err != nil || u.GetDeletionTimestamp() != nil {
		return err
	}
	crt, err := parse(u)
	if err != nil {
		return err
	}
	sns, sname := crt.secret()
	s, getErr := c.cs.CoreV1().Secrets(sns).Get(ctx, sname, metav1.GetOptions{})
	if getErr != nil && !apierrors.IsNotFound(getErr) && sname != "" {
		return getErr
	}
	typ := corev1.SecretTypeTLS // as cert-management creates it
	if getErr == nil {
		typ = s.Type
		issued := len(s.Data[CertKey]) > 0 && len(s.Data[KeyKey]) > 0 && len(s.Data[CAKey]) > 0
		if issued && crt.Status.State == "Ready" && crt.Status.ObservedGeneration == crt.Generation && !force && !crt.Spec.Renew {
			return nil
		}
	}
	iss, err := c.check(ctx, crt)
	if p := (*problem)(nil); errors.As(err, &p) {
		return errors.Join(err, c.setStatus(ctx, u, "Error", p.msg, nil))
	} else if err != nil {
		return err
	}
	cert, err := iss.Issue()
	if err == nil {
		err = c.writeSecret(ctx, crt, sns, sname, typ, cert)
	}
	if err == nil && crt.Spec.Renew { // the request is consumed, as by cert-management
		u, err = certs.Patch(ctx, name, types.MergePatchType, []byte(`{"spec":{"renew":null}}`), metav1.PatchOptions{})
	}
	if err != nil {
		return err
	}
	return c.setStatus(ctx, u, "Ready", fmt.Sprintf("certificate (SN %x) valid from %s to %s", cert.Cert.SerialNumber,
		cert.Cert.NotBefore.UTC().Format(time.RFC3339), cert.Cert.NotAfter.UTC().Format(time.RFC3339)), &cert)
}

// check validates the Certificate and its Issuer as cert-management does for
// a selfSigned Issuer, and returns the issuer that issues the certificate.
func (c *Controller) check(ctx context.Context, crt *certificate) (*Issuer, error) {
	ref, spec := crt.Spec.IssuerRef, crt.Spec
	ref.Namespace = cmp.Or(ref.Namespace, crt.Namespace)
	if _, name := crt.secret(); name == "" {
		return nil, &problem{msg: "the stand-in needs spec.secretRef.name or spec.secretName"}
	} else if ref.Name == "" {
		return nil, &problem{msg: "the stand-in has no default issuer: set spec.issuerRef"}
	}
	issuer, err := c.dyn.Resource(IssuerResource).Namespace(ref.Namespace).Get(ctx, ref.Name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil, &problem{msg: fmt.Sprintf("issuer %s/%s not found", ref.Namespace, ref.Name), retry: true}
	} else if err != nil {
		return nil, err
	}
	validity, err := time.ParseDuration(cmp.Or(spec.Duration, "0s"))
	_, selfSigned, _ := unstructured.NestedMap(issuer.Object, "spec", "selfSigned")
	switch key := spec.PrivateKey; {
	case !selfSigned:
		return nil, &problem{msg: fmt.Sprintf("issuer %s/%s: the stand-in serves only selfSigned issuers", ref.Namespace, ref.Name)}
	case !spec.IsCA:
		return nil, &problem{msg: "a self-signed certificate needs spec.isCA: true"}
	case spec.CommonName == "":
		return nil, &problem{msg: "missing common name"}
	case key.Algorithm != "" && key.Algorithm != "ECDSA" || key.Size != 0 && key.Size != 256:
		return nil, &problem{msg: fmt.Sprintf("private key %s %d: the stand-in issues only ECDSA P-256 keys", key.Algorithm, key.Size)}
	case err != nil:
		return nil, &problem{msg: "spec.duration: " + err.Error()}
	}
	seen := map[string]bool{}
	for _, d := range append([]string{spec.CommonName}, spec.DNSNames...) {
		if seen[d] {
			return nil, &problem{msg: "duplicate domain: " + d}
		}
		seen[d] = true
	}
	return &Issuer{CommonName: spec.CommonName, DNSNames: spec.DNSNames, Validity: validity}, nil
}

// writeSecret applies the certificate's keys, the labels, the writer
// annotation and an ownerReference to the Certificate, which replaces the
// one the stand-in set before: the last writer is the only Certificate that
// owns the Secret. Other keys, labels and annotations stay. typ is the type
// the Secret has, which cannot change, or the type to create it with.
func (c *Controller) writeSecret(ctx context.Context, crt *certificate, ns, name string, typ corev1.SecretType, cert Issued) error {
	labels := maps.Collect(maps.All(crt.Spec.SecretLabels))
	labels[CertificateLabel] = "true"
	s := corev1ac.Secret(name, ns).WithType(typ).WithData(cert.Files()).WithLabels(labels).
		WithAnnotations(map[string]string{WriterAnnotation: crt.Namespace + "/" + crt.Name})
	if ns == crt.Namespace { // an ownerReference cannot point into another namespace
		s.WithOwnerReferences(metav1ac.OwnerReference().WithAPIVersion(Group + "/" + Version).
			WithKind("Certificate").WithName(crt.Name).WithUID(crt.UID))
	}
	_, err := c.cs.CoreV1().Secrets(ns).Apply(ctx, s, metav1.ApplyOptions{FieldManager: FieldManager, Force: true})
	return err
}

func (c *Controller) setStatus(ctx context.Context, u *unstructured.Unstructured, state, msg string, cert *Issued) error {
	spec, _ := u.Object["spec"].(map[string]any)
	status, ok := u.Object["status"].(map[string]any)
	if !ok {
		status = map[string]any{}
	}
	status["state"], status["message"], status["observedGeneration"] = state, msg, u.GetGeneration()
	for _, f := range []string{"commonName", "dnsNames", "issuerRef"} {
		if v, ok := spec[f]; ok {
			status[f] = v
		}
	}
	if cert != nil {
		status["expirationDate"] = cert.Cert.NotAfter.UTC().Format(time.RFC3339)
	}
	u.Object["status"] = status
	_, err := c.dyn.Resource(CertificateResource).Namespace(u.GetNamespace()).UpdateStatus(ctx, u, metav1.UpdateOptions{})
	return err
}

package syncertest

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"sort"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/apimachinery/pkg/watch"
	admissionregistrationv1ac "k8s.io/client-go/applyconfigurations/admissionregistration/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"

	"github.com/kyma-project/kim-snatch/pkg/certtest"
)

// ManifestFieldManager stands for whoever applies the webhook's manifests.
const ManifestFieldManager = "kubectl-client-side-apply"

// WebhookConfiguration returns a MutatingWebhookConfiguration shaped like
// the one in deploy/webhook, with an empty caBundle in every entry. The
// entries call a URL that nothing serves and match only namespaces with a
// label no test sets, so the API server never calls them.
func WebhookConfiguration(name string, webhooks ...string) *admissionregistrationv1.MutatingWebhookConfiguration {
	mwc := &admissionregistrationv1.MutatingWebhookConfiguration{ObjectMeta: metav1.ObjectMeta{Name: name}}
	for _, wh := range webhooks {
		mwc.Webhooks = append(mwc.Webhooks, admissionregistrationv1.MutatingWebhook{
			Name:                    wh,
			ClientConfig:            admissionregistrationv1.WebhookClientConfig{URL: ptr.To("https://127.0.0.1:1/mutate-pod")},
			Rules:                   []admissionregistrationv1.RuleWithOperations{{Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.Create}, Rule: admissionregistrationv1.Rule{APIGroups: []string{""}, APIVersions: []string{"v1"}, Resources: []string{"pods"}}}},
			FailurePolicy:           ptr.To(admissionregistrationv1.Ignore),
			SideEffects:             ptr.To(admissionregistrationv1.SideEffectClassNone),
			AdmissionReviewVersions: []string{"v1"},
			TimeoutSeconds:          ptr.To[int32](2),
			NamespaceSelector:       &metav1.LabelSelector{MatchLabels: map[string]string{"kim-snatch-test/never": "true"}},
		})
	}
	return mwc
}

// CreateWebhookConfiguration creates mwc as the manifests' owner would.
func CreateWebhookConfiguration(ctx context.Context, cs kubernetes.Interface, mwc *admissionregistrationv1.MutatingWebhookConfiguration) (*admissionregistrationv1.MutatingWebhookConfiguration, error) {
	return cs.AdmissionregistrationV1().MutatingWebhookConfigurations().Create(ctx, mwc, metav1.CreateOptions{FieldManager: ManifestFieldManager})
}

// CertSecret returns the certificate Secret with ca under key, plus the
// tls.crt/tls.key pair Gardener writes next to it. The key is a placeholder
// (the syncer never reads it), so the Secret is Opaque: the API server warns
// about a kubernetes.io/tls Secret whose key does not parse.
func CertSecret(namespace, name, key string, ca []byte) *corev1.Secret {
	return &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name},
		Type:       corev1.SecretTypeOpaque,
		Data: map[string][]byte{
			key:                     ca,
			corev1.TLSCertKey:       ca,
			corev1.TLSPrivateKeyKey: []byte("not a key; the syncer never reads it"),
		},
	}
}

// DisableMarker returns the emergency-disable ConfigMap named name as the
// documented disable creates it (docs/operations.md, "Emergency disable and
// restore"): kubectl create configmap with the literals reason and by.
func DisableMarker(namespace, name, reason, by string) *corev1.ConfigMap {
	return &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name},
		Data:       map[string]string{"reason": reason, "by": by},
	}
}

// CreateNamespace creates a namespace.
func CreateNamespace(ctx context.Context, cs kubernetes.Interface, name string) error {
	_, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{})
	return err
}

// Bundles returns the caBundle of every webhook entry.
func Bundles(mwc *admissionregistrationv1.MutatingWebhookConfiguration) [][]byte {
	out := make([][]byte, 0, len(mwc.Webhooks))
	for _, wh := range mwc.Webhooks {
		out = append(out, wh.ClientConfig.CABundle)
	}
	return out
}

// EveryBundleIs reports whether every webhook entry holds exactly the
// certificates fps, in that order.
func EveryBundleIs(mwc *admissionregistrationv1.MutatingWebhookConfiguration, fps ...string) bool {
	if len(mwc.Webhooks) == 0 {
		return false
	}
	for _, b := range Bundles(mwc) {
		if !slices.Equal(certtest.Fingerprints(b), fps) {
			return false
		}
	}
	return true
}

// EveryBundleHas reports whether every webhook entry holds the certificate
// fp, among others.
func EveryBundleHas(mwc *admissionregistrationv1.MutatingWebhookConfiguration, fp string) bool {
	if len(mwc.Webhooks) == 0 {
		return false
	}
	for _, b := range Bundles(mwc) {
		if !slices.Contains(certtest.Fingerprints(b), fp) {
			return false
		}
	}
	return true
}

// WatchWebhookConfiguration calls observe with the current object and then
// with every change, until observe returns true, and returns the object and
// the time it was received. Receiving it through a watch, rather than
// polling, is what makes the time precise enough to report latencies.
func WatchWebhookConfiguration(ctx context.Context, cs kubernetes.Interface, name string, timeout time.Duration, observe func(*admissionregistrationv1.MutatingWebhookConfiguration) bool) (*admissionregistrationv1.MutatingWebhookConfiguration, time.Time, error) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	client := cs.AdmissionregistrationV1().MutatingWebhookConfigurations()
	selector := fields.OneTermEqualSelector("metadata.name", name).String()
	for {
		list, err := client.List(ctx, metav1.ListOptions{FieldSelector: selector})
		if err != nil {
			return nil, time.Time{}, err
		}
		for i := range list.Items {
			if observe(&list.Items[i]) {
				return &list.Items[i], time.Now(), nil
			}
		}
		w, err := client.Watch(ctx, metav1.ListOptions{FieldSelector: selector, ResourceVersion: list.ResourceVersion})
		if err != nil {
			return nil, time.Time{}, err
		}
		for ev := range w.ResultChan() {
			at := time.Now()
			if ev.Type != watch.Added && ev.Type != watch.Modified {
				continue
			}
			mwc, ok := ev.Object.(*admissionregistrationv1.MutatingWebhookConfiguration)
			if ok && observe(mwc) {
				w.Stop()
				return mwc, at, nil
			}
		}
		w.Stop()
		if ctx.Err() != nil {
			return nil, time.Time{}, fmt.Errorf("MutatingWebhookConfiguration %s: condition not met within %s", name, timeout)
		}
		// The watch ended early (the API server closes watches now and
		// then); list again and continue.
	}
}

// WaitForEvent waits until an Event of type eventType and reason, regarding
// the named object, exists in namespace, and returns it.
func WaitForEvent(ctx context.Context, cs kubernetes.Interface, namespace, regarding, eventType, reason string, timeout time.Duration) (*eventsv1.Event, error) {
	var found *eventsv1.Event
	err := wait.PollUntilContextTimeout(ctx, 50*time.Millisecond, timeout, true, func(ctx context.Context) (bool, error) {
		list, err := cs.EventsV1().Events(namespace).List(ctx, metav1.ListOptions{})
		if err != nil {
			return false, err
		}
		for i, ev := range list.Items {
			if ev.Regarding.Name == regarding && ev.Type == eventType && ev.Reason == reason {
				found = &list.Items[i]
				return true, nil
			}
		}
		return false, nil
	})
	if err != nil {
		return nil, fmt.Errorf("no %s Event %s regarding %s/%s within %s: %w", eventType, reason, namespace, regarding, timeout, err)
	}
	return found, nil
}

// Percentile returns the p-th percentile (0 < p <= 100) of ds by the
// nearest-rank method.
func Percentile(ds []time.Duration, p float64) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := slices.Clone(ds)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	rank := int(math.Ceil(float64(len(s))*p/100)) - 1
	return s[min(max(rank, 0), len(s)-1)]
}

// ApplyAsOldSyncer writes bundle into every webhook entry of the named
// MutatingWebhookConfiguration, and annotation under annotationKey, as the
// syncer did before it wrote with a JSON patch: server-side apply of
// {name, caBundle} per entry and the annotation under fieldManager, on the
// UID and resourceVersion it read, without force. It returns the object as
// the apply left it.
func ApplyAsOldSyncer(ctx context.Context, cs kubernetes.Interface, name, fieldManager string, bundle []byte, annotationKey, annotation string) (*admissionregistrationv1.MutatingWebhookConfiguration, error) {
	client := cs.AdmissionregistrationV1().MutatingWebhookConfigurations()
	mwc, err := client.Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return nil, err
	}
	ac := admissionregistrationv1ac.MutatingWebhookConfiguration(mwc.Name).
		WithUID(mwc.UID).
		WithResourceVersion(mwc.ResourceVersion).
		WithAnnotations(map[string]string{annotationKey: annotation})
	for _, wh := range mwc.Webhooks {
		ac.WithWebhooks(admissionregistrationv1ac.MutatingWebhook().
			WithName(wh.Name).
			WithClientConfig(admissionregistrationv1ac.WebhookClientConfig().WithCABundle(bundle...)))
	}
	return client.Apply(ctx, ac, metav1.ApplyOptions{FieldManager: fieldManager})
}

// HasApplyEntry reports whether fieldManager has an entry with operation
// Apply in the managedFields of mwc.
func HasApplyEntry(mwc *admissionregistrationv1.MutatingWebhookConfiguration, fieldManager string) bool {
	return slices.ContainsFunc(mwc.ManagedFields, func(mf metav1.ManagedFieldsEntry) bool {
		return mf.Manager == fieldManager && mf.Operation == metav1.ManagedFieldsOperationApply
	})
}

// ForceApply applies mwc whole as fieldManager with force, without its
// managedFields, and returns the object as the API server left it: the
// write of lifecycle-manager's applier, and of kim-snatch 1.0.x (manager
// snatch) on the object it read.
func ForceApply(ctx context.Context, cs kubernetes.Interface, mwc *admissionregistrationv1.MutatingWebhookConfiguration,
	fieldManager string,
) (*admissionregistrationv1.MutatingWebhookConfiguration, error) {
	mwc = mwc.DeepCopy()
	mwc.APIVersion, mwc.Kind = "admissionregistration.k8s.io/v1", "MutatingWebhookConfiguration"
	mwc.ManagedFields = nil
	body, err := json.Marshal(mwc)
	if err != nil {
		return nil, err
	}
	return cs.AdmissionregistrationV1().MutatingWebhookConfigurations().Patch(ctx, mwc.Name, types.ApplyPatchType, body,
		metav1.PatchOptions{FieldManager: fieldManager, Force: ptr.To(true)})
}

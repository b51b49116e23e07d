package stack

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// Names shared with deploy/.
const (
	Namespace         = "kyma-system"
	SecretName        = "kim-snatch-certificates"
	WebhookConfigName = "kim-snatch-mutating-webhook-configuration"
	WebhookEntryName  = "pods.kim-snatch.kyma-project.io"
	LeaseName         = "cabundle-syncer"
	ManagedByLabel    = "operator.kyma-project.io/managed-by"
	WebhookName       = "snatch-webhook"
	SyncerName        = "cabundle-syncer"
	// ServiceName is the Service of deploy/webhook that the
	// MutatingWebhookConfiguration calls.
	ServiceName = WebhookName
)

// CreateNamespace creates a namespace, labelled as Kyma-managed if managed.
// An existing namespace is not an error.
func CreateNamespace(ctx context.Context, cs kubernetes.Interface, name string, managed bool) error {
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}
	if managed {
		ns.Labels = map[string]string{ManagedByLabel: "kyma"}
	}
	_, err := cs.CoreV1().Namespaces().Create(ctx, ns, metav1.CreateOptions{})
	if apierrors.IsAlreadyExists(err) {
		return nil
	}
	return err
}

package main

import (
	"context"
	"errors"
	"strings"
	"testing"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kyma-project/kim-snatch/pkg/certtest"
	"github.com/kyma-project/kim-snatch/pkg/syncer"
	"github.com/kyma-project/kim-snatch/test/framework"
	"github.com/kyma-project/kim-snatch/test/framework/poll"
)

// The messages of deploy/syncer/policy.yaml's guards: a test case names the
// guard that must refuse it, so that each guard is shown to hold on its own.
const (
	guardDelete     = "may not delete the webhook configuration"
	guardList       = "may not add, remove, rename or reorder webhooks"
	guardClient     = "may change only the caBundle of a webhook's clientConfig"
	guardMatch      = "may not change a webhook's rules, matchPolicy or matchConditions"
	guardSelectors  = "may not change a webhook's namespaceSelector or objectSelector"
	guardBehaviour  = "may not change a webhook's failurePolicy, sideEffects"
	guardLabels     = "may not change the labels"
	guardAnnotation = "may change no annotation but " + syncer.StateAnnotation
	guardOwners     = "may not change the owners or finalizers"
)

type mwcChange = func(*admissionregistrationv1.MutatingWebhookConfiguration)

// firstWebhook applies f to the first entry, which is enough for a guard
// that compares every entry.
func firstWebhook(f func(*admissionregistrationv1.MutatingWebhook)) mwcChange {
	return func(m *admissionregistrationv1.MutatingWebhookConfiguration) { f(&m.Webhooks[0]) }
}

var changeURL = firstWebhook(func(w *admissionregistrationv1.MutatingWebhook) {
	w.ClientConfig.URL = ptr.To("https://attacker.example.com/mutate")
})

// policyCases are the changes of the syncer's ServiceAccount and the guard
// that refuses each ("" for allowed).
var policyCases = []struct {
	name   string
	change mwcChange
	guard  string
}{
	{"ca_bundles_change_is_allowed", func(m *admissionregistrationv1.MutatingWebhookConfiguration) {
		for i := range m.Webhooks {
			m.Webhooks[i].ClientConfig.CABundle = []byte("a bundle")
		}
	}, ""},
	{"state_annotation_change_is_allowed", func(m *admissionregistrationv1.MutatingWebhookConfiguration) {
		metav1.SetMetaDataAnnotation(&m.ObjectMeta, syncer.StateAnnotation, `{"v":1,"cas":{}}`)
	}, ""},
	// The release of a retired writer's server-side apply entry changes
	// managedFields alone.
	{"managed_fields_only_change_is_allowed", func(m *admissionregistrationv1.MutatingWebhookConfiguration) {
		m.ManagedFields = m.ManagedFields[1:]
	}, ""},
	{"adding_a_webhook_is_refused", func(m *admissionregistrationv1.MutatingWebhookConfiguration) {
		w := *m.Webhooks[0].DeepCopy()
		w.Name = "added.kim-snatch.kyma-project.io"
		m.Webhooks = append(m.Webhooks, w)
	}, guardList},
	{"removing_a_webhook_is_refused", func(m *admissionregistrationv1.MutatingWebhookConfiguration) { m.Webhooks = m.Webhooks[:1] }, guardList},
	{"reordering_the_webhooks_is_refused", func(m *admissionregistrationv1.MutatingWebhookConfiguration) {
		m.Webhooks[0], m.Webhooks[1] = m.Webhooks[1], m.Webhooks[0]
	}, guardList},
	{"renaming_a_webhook_is_refused", firstWebhook(func(w *admissionregistrationv1.MutatingWebhook) { w.Name = "renamed.kim-snatch.kyma-project.io" }), guardList},
	{"url_change_is_refused", changeURL, guardClient},
	{"service_change_is_refused", firstWebhook(func(w *admissionregistrationv1.MutatingWebhook) {
		w.ClientConfig.URL = nil
		w.ClientConfig.Service = &admissionregistrationv1.ServiceReference{Namespace: "attacker", Name: "webhook", Path: ptr.To("/mutate"), Port: ptr.To[int32](443)}
	}), guardClient},
	{"rules_change_is_refused", firstWebhook(func(w *admissionregistrationv1.MutatingWebhook) {
		w.Rules[0].Resources = []string{"pods", "secrets"}
	}), guardMatch},
	{"match_policy_change_is_refused", firstWebhook(func(w *admissionregistrationv1.MutatingWebhook) {
		w.MatchPolicy = ptr.To(admissionregistrationv1.Exact)
	}), guardMatch},
	{"match_conditions_change_is_refused", firstWebhook(func(w *admissionregistrationv1.MutatingWebhook) {
		w.MatchConditions = []admissionregistrationv1.MatchCondition{{Name: "all", Expression: "true"}}
	}), guardMatch},
	{"namespace_selector_change_is_refused", firstWebhook(func(w *admissionregistrationv1.MutatingWebhook) { w.NamespaceSelector = &metav1.LabelSelector{} }), guardSelectors},
	{"object_selector_change_is_refused", firstWebhook(func(w *admissionregistrationv1.MutatingWebhook) {
		w.ObjectSelector = &metav1.LabelSelector{MatchLabels: map[string]string{"app": "x"}}
	}), guardSelectors},
	{"failure_policy_change_is_refused", firstWebhook(func(w *admissionregistrationv1.MutatingWebhook) {
		w.FailurePolicy = ptr.To(admissionregistrationv1.Fail)
	}), guardBehaviour},
	{"side_effects_change_is_refused", firstWebhook(func(w *admissionregistrationv1.MutatingWebhook) {
		w.SideEffects = ptr.To(admissionregistrationv1.SideEffectClassNoneOnDryRun)
	}), guardBehaviour},
	{"timeout_seconds_change_is_refused", firstWebhook(func(w *admissionregistrationv1.MutatingWebhook) { w.TimeoutSeconds = ptr.To[int32](30) }), guardBehaviour},
	{"admission_review_versions_change_is_refused", firstWebhook(func(w *admissionregistrationv1.MutatingWebhook) {
		w.AdmissionReviewVersions = []string{"v1", "v1beta1"}
	}), guardBehaviour},
	{"reinvocation_policy_change_is_refused", firstWebhook(func(w *admissionregistrationv1.MutatingWebhook) {
		w.ReinvocationPolicy = ptr.To(admissionregistrationv1.IfNeededReinvocationPolicy)
	}), guardBehaviour},
	{"adding_a_label_is_refused", func(m *admissionregistrationv1.MutatingWebhookConfiguration) {
		metav1.SetMetaDataLabel(&m.ObjectMeta, "example.com/added", "true")
	}, guardLabels},
	{"removing_a_label_is_refused", func(m *admissionregistrationv1.MutatingWebhookConfiguration) { delete(m.Labels, policyLabel) }, guardLabels},
	{"adding_another_annotation_is_refused", func(m *admissionregistrationv1.MutatingWebhookConfiguration) {
		metav1.SetMetaDataAnnotation(&m.ObjectMeta, "example.com/added", "true")
	}, guardAnnotation},
	{"changing_another_annotation_is_refused", func(m *admissionregistrationv1.MutatingWebhookConfiguration) {
		metav1.SetMetaDataAnnotation(&m.ObjectMeta, policyAnnotation, "changed")
	}, guardAnnotation},
	{"removing_another_annotation_is_refused", func(m *admissionregistrationv1.MutatingWebhookConfiguration) { delete(m.Annotations, policyAnnotation) }, guardAnnotation},
	{"adding_an_owner_is_refused", func(m *admissionregistrationv1.MutatingWebhookConfiguration) {
		m.OwnerReferences = []metav1.OwnerReference{{APIVersion: "v1", Kind: "Namespace", Name: "default", UID: "0e7d5c1c-0000-4000-8000-000000000000"}}
	}, guardOwners},
	{"adding_a_finalizer_is_refused", func(m *admissionregistrationv1.MutatingWebhookConfiguration) {
		m.Finalizers = []string{"example.com/keep"}
	}, guardOwners},
}

// A label and an annotation of the deployer, set before the test.
const policyLabel, policyAnnotation = "app.kubernetes.io/part-of", "example.com/deployer"

// The shipped policy, against a real API server: the syncer's ServiceAccount
// may change the caBundles and its state annotation of the webhook
// configuration and nothing else; another identity may change anything.
func TestPolicyLetsTheSyncerChangeOnlyTheCABundlesAndItsState(t *testing.T) {
	c := framework.Integration(t, framework.Options{}, "")
	cs := c.Clientset
	ctx := context.Background()
	setupObjects(t, cs, certtest.MustCA(t, certtest.Options{CommonName: "ca"}))
	applyManifests(t, c, "rbac.yaml", "policy.yaml")
	mwc, err := cs.AdmissionregistrationV1().MutatingWebhookConfigurations().Patch(ctx, mwcName, types.MergePatchType,
		[]byte(`{"metadata":{"labels":{"`+policyLabel+`":"kim-snatch"},"annotations":{"`+policyAnnotation+`":"flux"}}}`), metav1.PatchOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(mwc.ManagedFields) < 2 {
		t.Fatalf("managedFields %v: managed_fields_only_change_is_allowed needs an entry to drop and one to keep", mwc.ManagedFields)
	}
	saCfg, _ := serviceAccountConfig(t, c)
	sa := kubernetes.NewForConfigOrDie(saCfg)
	waitPolicyEnforced(t, sa, mwc)

	for _, tt := range policyCases {
		t.Run(tt.name, func(t *testing.T) {
			err := dryRunPatch(t, sa, mwc, tt.change)
			checkGuard(t, err, tt.guard)
		})
	}
	t.Run("another_identity_changes_the_url", func(t *testing.T) {
		if err := dryRunPatch(t, cs, mwc, changeURL); err != nil {
			t.Errorf("the cluster admin was refused a URL change: %v", err)
		}
	})
	t.Run("delete_is_refused", func(t *testing.T) {
		// RBAC refuses first; with delete granted, the policy still does.
		del := func() error {
			return sa.AdmissionregistrationV1().MutatingWebhookConfigurations().Delete(ctx, mwcName, metav1.DeleteOptions{DryRun: []string{metav1.DryRunAll}})
		}
		if err := del(); !apierrors.IsForbidden(err) || strings.Contains(err.Error(), guardDelete) {
			t.Fatalf("delete without the right: got %v, want RBAC's Forbidden", err)
		}
		grantDelete(t, cs)
		// checkGuard judges the last answer, also of a wait that gives up.
		var err error
		_ = poll.Until(t.Context(), "the delete to get past RBAC", func(context.Context) error {
			if err = del(); err == nil || strings.Contains(err.Error(), guardDelete) {
				return nil
			}
			return err
		})
		checkGuard(t, err, guardDelete)
	})
}

// checkGuard fails t unless err is nil for guard "", or the policy's
// refusal with guard's message.
func checkGuard(t *testing.T, err error, guard string) {
	t.Helper()
	switch {
	case guard == "" && err != nil:
		t.Errorf("refused: %v", err)
	case guard != "" && err == nil:
		t.Errorf("allowed, want the refusal %q", guard)
	case guard != "" && (!apierrors.IsForbidden(err) || !strings.Contains(err.Error(), guard)):
		t.Errorf("got %v, want Forbidden with %q", err, guard)
	}
}

// dryRunPatch sends, as a dry run, the JSON merge patch from mwc to mwc
// changed by change.
func dryRunPatch(t *testing.T, cs kubernetes.Interface, mwc *admissionregistrationv1.MutatingWebhookConfiguration, change mwcChange) error {
	t.Helper()
	changed := mwc.DeepCopy()
	change(changed)
	patch, err := client.MergeFrom(mwc).Data(changed)
	if err != nil {
		t.Fatal(err)
	}
	_, err = cs.AdmissionregistrationV1().MutatingWebhookConfigurations().Patch(context.Background(), mwcName, types.MergePatchType, patch,
		metav1.PatchOptions{DryRun: []string{metav1.DryRunAll}})
	return err
}

// waitPolicyEnforced waits until the API server refuses the syncer's
// ServiceAccount a URL change: policies take effect moments after they are
// created.
func waitPolicyEnforced(t *testing.T, sa kubernetes.Interface, mwc *admissionregistrationv1.MutatingWebhookConfiguration) {
	t.Helper()
	poll.Eventually(t, "the policy to refuse a URL change of the syncer's ServiceAccount", func(context.Context) error {
		err := dryRunPatch(t, sa, mwc, changeURL)
		switch {
		case err == nil:
			return errors.New("the URL change was allowed")
		case !strings.Contains(err.Error(), guardClient):
			return err
		}
		return nil
	})
}

// grantDelete lets the ServiceAccount cabundle-syncer delete the webhook
// configuration, which rbac.yaml does not.
func grantDelete(t *testing.T, cs kubernetes.Interface) {
	t.Helper()
	ctx := context.Background()
	role := &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: "test-delete-mwc"}, Rules: []rbacv1.PolicyRule{{
		APIGroups: []string{"admissionregistration.k8s.io"}, Resources: []string{"mutatingwebhookconfigurations"}, Verbs: []string{"delete"},
	}}}
	if _, err := cs.RbacV1().ClusterRoles().Create(ctx, role, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	binding := &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: "test-delete-mwc"},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: role.Name},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Namespace: namespace, Name: "cabundle-syncer"}},
	}
	if _, err := cs.RbacV1().ClusterRoleBindings().Create(ctx, binding, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
}

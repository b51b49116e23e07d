package check_test

import (
	"errors"
	"testing"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/utils/ptr"

	"github.com/kyma-project/kim-snatch/pkg/check"
	"github.com/kyma-project/kim-snatch/pkg/check/checktest"
)

func TestWebhookConfigurationFailsOnAnEntryThatCannotPlaceKymaPods(t *testing.T) {
	now := time.Now()
	runChecklist(t, now, []string{check.IDWebhookConfiguration}, []checklistCase{
		{
			name:   "webhook_configuration_missing_fails_and_skips",
			mutate: func(_ *testing.T, in *checktest.Install) { in.MWC.Name = "other" },
			extra:  []runtime.Object{namespace("customer", nil)},
			config: func(cfg *check.Config) { cfg.TargetNamespace = "customer" },
			want: map[string]check.Status{
				check.IDWebhookConfiguration: check.StatusFail, check.IDCABundle: check.StatusSkip, check.IDNamespace: check.StatusSkip,
				check.IDWebhookEndpoints: check.StatusSkip, check.IDServedCertificate: check.StatusSkip,
				// The API server calls no entry of ours, so another webhook added the term.
				check.IDAdmission: check.StatusFail,
			},
			wantMessage: map[string][]string{
				check.IDWebhookConfiguration: {"kim-snatch-mutating-webhook-configuration not found"},
				check.IDAdmission:            {"does not exist: another webhook added it"},
			},
		},
		{
			name: "failure_policy_fail_fails_naming_the_entry",
			mutate: func(_ *testing.T, in *checktest.Install) {
				addLegacyEntry(in)
				in.MWC.Webhooks[1].FailurePolicy = ptr.To(admissionregistrationv1.Fail)
			},
			want:        map[string]check.Status{check.IDWebhookConfiguration: check.StatusFail},
			wantMessage: map[string][]string{check.IDWebhookConfiguration: {"entry pods-legacy.kim-snatch.kyma-project.io: failurePolicy is Fail, want Ignore"}},
		},
		{
			name: "rules_without_create_fail",
			mutate: func(_ *testing.T, in *checktest.Install) {
				in.MWC.Webhooks[0].Rules[0].Operations = []admissionregistrationv1.OperationType{admissionregistrationv1.Update}
			},
			want:        map[string]check.Status{check.IDWebhookConfiguration: check.StatusFail},
			wantMessage: map[string][]string{check.IDWebhookConfiguration: {"rules do not cover CREATE of pods"}},
		},
		{
			name: "selector_without_kyma_fails",
			mutate: func(_ *testing.T, in *checktest.Install) {
				in.MWC.Webhooks[0].NamespaceSelector = &metav1.LabelSelector{MatchLabels: map[string]string{check.ManagedByLabel: "customer"}}
			},
			want:        map[string]check.Status{check.IDWebhookConfiguration: check.StatusFail},
			wantMessage: map[string][]string{check.IDWebhookConfiguration: {`namespaceSelector "operator.kyma-project.io/managed-by=customer" does not select`}},
		},
		{
			name: "wildcard_rules_and_no_selector_pass",
			mutate: func(_ *testing.T, in *checktest.Install) {
				wh := &in.MWC.Webhooks[0]
				wh.NamespaceSelector = nil
				wh.Rules = []admissionregistrationv1.RuleWithOperations{{
					Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.OperationAll},
					Rule:       admissionregistrationv1.Rule{APIGroups: []string{"*"}, APIVersions: []string{"*"}, Resources: []string{"*"}},
				}}
			},
		},
		{
			name:  "webhook_configuration_forbidden_skips",
			react: deny("get", "mutatingwebhookconfigurations", forbidden("mutatingwebhookconfigurations")),
			want: map[string]check.Status{
				check.IDWebhookConfiguration: check.StatusSkip, check.IDCABundle: check.StatusSkip,
				check.IDWebhookEndpoints: check.StatusSkip, check.IDServedCertificate: check.StatusSkip,
				check.IDAdmission: check.StatusSkip,
			},
			wantMessage: map[string][]string{
				check.IDWebhookConfiguration: {"these credentials may not get MutatingWebhookConfiguration " + checktest.WebhookConfiguration},
				check.IDAdmission:            {"whose term it is was not seen"},
			},
		},
		{
			name:  "webhook_configuration_read_error_fails_and_skips",
			react: deny("get", "mutatingwebhookconfigurations", apierrors.NewServiceUnavailable("etcd is down")),
			want: map[string]check.Status{
				check.IDWebhookConfiguration: check.StatusFail, check.IDCABundle: check.StatusSkip,
				check.IDWebhookEndpoints: check.StatusSkip, check.IDServedCertificate: check.StatusSkip,
				check.IDAdmission: check.StatusSkip,
			},
			wantMessage: map[string][]string{check.IDCABundle: {"could not be read"}, check.IDAdmission: {"to tell whose term it is"}},
		},
	})
}

func TestWebhookEndpointsFailWhenAnEntryReachesNoReadyReplica(t *testing.T) {
	now := time.Now()
	runChecklist(t, now, []string{check.IDWebhookEndpoints}, []checklistCase{
		{
			name:   "webhook_service_missing_fails",
			mutate: func(_ *testing.T, in *checktest.Install) { in.Service = nil },
			want:   map[string]check.Status{check.IDWebhookEndpoints: check.StatusFail, check.IDServedCertificate: check.StatusSkip},
			wantMessage: map[string][]string{
				check.IDWebhookEndpoints:  {"entry pods.kim-snatch.kyma-project.io → Service kyma-system/snatch-webhook port 443 path /mutate-pod: Service kyma-system/snatch-webhook does not exist"},
				check.IDServedCertificate: {"no ready endpoint to dial (see webhook-endpoints)"},
			},
		},
		{
			name: "no_ready_endpoint_fails",
			mutate: func(_ *testing.T, in *checktest.Install) {
				for _, s := range in.EndpointSlices {
					s.Endpoints[0].Conditions.Ready = ptr.To(false)
				}
			},
			want:        map[string]check.Status{check.IDWebhookEndpoints: check.StatusFail, check.IDServedCertificate: check.StatusSkip},
			wantMessage: map[string][]string{check.IDWebhookEndpoints: {"Service kyma-system/snatch-webhook has no ready endpoint for port 443"}},
		},
		{
			name: "entry_port_the_service_lacks_fails",
			mutate: func(_ *testing.T, in *checktest.Install) {
				in.MWC.Webhooks[0].ClientConfig.Service.Port = ptr.To[int32](8443)
			},
			want:        map[string]check.Status{check.IDWebhookEndpoints: check.StatusFail, check.IDServedCertificate: check.StatusSkip},
			wantMessage: map[string][]string{check.IDWebhookEndpoints: {"port 8443 path /mutate-pod: Service kyma-system/snatch-webhook has no port 8443"}},
		},
		{
			name: "entry_path_the_webhook_does_not_serve_fails",
			mutate: func(_ *testing.T, in *checktest.Install) {
				in.MWC.Webhooks[0].ClientConfig.Service.Path = ptr.To("/mutate")
			},
			want:        map[string]check.Status{check.IDWebhookEndpoints: check.StatusFail},
			wantMessage: map[string][]string{check.IDWebhookEndpoints: {"calls path /mutate, which the webhook does not serve (/mutate-pod, /mutate--v1-pod)"}},
		},
		{
			name: "entry_of_another_system_warns",
			mutate: func(_ *testing.T, in *checktest.Install) {
				addLegacyEntry(in)
				in.MWC.Webhooks[1].Name = "mpod-v1.kb.io"
				in.MWC.Webhooks[1].ClientConfig.Service.Name = "kim-snatch-webhook-service"
			},
			extra: []runtime.Object{&corev1.Service{
				ObjectMeta: metav1.ObjectMeta{Namespace: testNamespace, Name: "kim-snatch-webhook-service"},
				Spec:       corev1.ServiceSpec{Ports: []corev1.ServicePort{{Name: "https", Port: 443}}},
			}},
			want:        map[string]check.Status{check.IDWebhookEndpoints: check.StatusWarn},
			wantMessage: map[string][]string{check.IDWebhookEndpoints: {"2 ready endpoints; entries of another system: entry mpod-v1.kb.io → Service kyma-system/kim-snatch-webhook-service port 443 path /mutate-pod: Service kyma-system/kim-snatch-webhook-service has no ready endpoint for port 443"}},
		},
		{
			name: "entry_of_another_system_with_a_missing_service_fails",
			mutate: func(_ *testing.T, in *checktest.Install) {
				addLegacyEntry(in)
				in.MWC.Webhooks[1].ClientConfig.Service.Name = "kim-snatch-webhook-service"
			},
			want:        map[string]check.Status{check.IDWebhookEndpoints: check.StatusFail},
			wantMessage: map[string][]string{check.IDWebhookEndpoints: {"Service kyma-system/kim-snatch-webhook-service does not exist"}},
		},
		{
			name: "services_forbidden_skips",
			react: deny("get", "services", apierrors.NewForbidden(schema.GroupResource{Resource: "services"}, "snatch-webhook",
				errors.New("no RBAC"))),
			want:        map[string]check.Status{check.IDWebhookEndpoints: check.StatusSkip, check.IDServedCertificate: check.StatusSkip},
			wantMessage: map[string][]string{check.IDWebhookEndpoints: {"these credentials may not get Services and list EndpointSlices in kyma-system"}},
		},
	})
}

func TestTargetNamespaceWarnsUnlessKymaManagesIt(t *testing.T) {
	now := time.Now()
	runChecklist(t, now, []string{check.IDNamespace}, []checklistCase{
		{
			name:        "target_namespace_managed_by_kyma_passes",
			config:      func(cfg *check.Config) { cfg.TargetNamespace = testNamespace },
			wantMessage: map[string][]string{check.IDNamespace: {"Pods created in kyma-system are sent to the webhook", "kim-snatch.kyma-project.io/opt-out=true"}},
		},
		{
			name:        "target_namespace_without_label_warns",
			extra:       []runtime.Object{namespace("customer", nil)},
			config:      func(cfg *check.Config) { cfg.TargetNamespace = "customer" },
			want:        map[string]check.Status{check.IDNamespace: check.StatusWarn},
			wantMessage: map[string][]string{check.IDNamespace: {"Pods created in customer are not sent to the webhook: the namespace lacks the label operator.kyma-project.io/managed-by=kyma"}},
		},
		{
			name:        "target_namespace_excluded_warns",
			extra:       []runtime.Object{namespace("kube-system", map[string]string{check.ManagedByLabel: check.ManagedByValue})},
			config:      func(cfg *check.Config) { cfg.TargetNamespace = "kube-system" },
			want:        map[string]check.Status{check.IDNamespace: check.StatusWarn},
			wantMessage: map[string][]string{check.IDNamespace: {"although it is labelled", "kubernetes.io/metadata.name notin (kube-system)"}},
		},
		{
			name:        "target_namespace_missing_fails",
			config:      func(cfg *check.Config) { cfg.TargetNamespace = "nope" },
			want:        map[string]check.Status{check.IDNamespace: check.StatusFail},
			wantMessage: map[string][]string{check.IDNamespace: {"namespace nope not found"}},
		},
		{
			name:   "target_namespace_forbidden_skips",
			config: func(cfg *check.Config) { cfg.TargetNamespace = "istio-system" },
			react: deny("get", "namespaces", apierrors.NewForbidden(schema.GroupResource{Resource: "namespaces"}, "istio-system",
				errors.New("no RBAC"))),
			want:        map[string]check.Status{check.IDNamespace: check.StatusSkip},
			wantMessage: map[string][]string{check.IDNamespace: {"these credentials may not get Namespace istio-system"}},
		},
	})
}

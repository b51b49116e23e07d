package check_test

import (
	"context"
	"errors"
	"net"
	"regexp"
	"strings"
	"testing"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"
	"k8s.io/utils/ptr"

	"github.com/kyma-project/kim-snatch/pkg/affinity"
	"github.com/kyma-project/kim-snatch/pkg/certtest"
	"github.com/kyma-project/kim-snatch/pkg/check"
	"github.com/kyma-project/kim-snatch/pkg/check/checktest"
)

const testNamespace = "kyma-system"

var allIDs = []string{check.IDWebhookPods, check.IDSyncerLease, check.IDCASecret, check.IDWebhookConfiguration, check.IDCABundle, check.IDWebhookEndpoints, check.IDServedCertificate, check.IDAdmission, check.IDKymaPool, check.IDPlacement}

func TestRun(t *testing.T) {
	now := time.Now()
	tests := []struct {
		name string
		// mutate changes the healthy install before it is loaded.
		mutate func(t *testing.T, in *checktest.Install)
		// extra objects, e.g. a target namespace.
		extra []runtime.Object
		// react installs API errors on the fake clientset.
		react  func(cs *fake.Clientset)
		config func(cfg *check.Config)
		// want lists the checks that do not PASS; every other one must.
		want map[string]check.Status
		// wantMessage lists strings each check's message must contain.
		wantMessage map[string][]string
	}{
		{
			name: "healthy",
			wantMessage: map[string][]string{
				check.IDWebhookPods:          {"2 of 2 webhook Pods ready", "snatch-webhook-5c8d7f9b6-abcde"},
				check.IDSyncerLease:          {"held by cabundle-syncer-7d9f8c6b5-x2k4q_", "Pod kyma-system/cabundle-syncer-7d9f8c6b5-x2k4q is Running"},
				check.IDCASecret:             {"Secret kyma-system/kim-snatch-certificates key ca.crt", "valid until"},
				check.IDWebhookConfiguration: {"1 entry (pods.kim-snatch.kyma-project.io)"},
				check.IDCABundle:             {"the 1 entry of kim-snatch-mutating-webhook-configuration trusts the CA"},
			},
		},
		{
			name:        "one_webhook_pod_ready_warns",
			mutate:      func(_ *testing.T, in *checktest.Install) { in.WebhookPods[1] = checktest.NotReady(in.WebhookPods[1]) },
			want:        map[string]check.Status{check.IDWebhookPods: check.StatusWarn},
			wantMessage: map[string][]string{check.IDWebhookPods: {"1 of 2 webhook Pods ready", "snatch-webhook-5c8d7f9b6-fghij (Running, not Ready: ContainersNotReady)"}},
		},
		{
			name: "no_webhook_pod_ready_fails",
			mutate: func(_ *testing.T, in *checktest.Install) {
				in.WebhookPods[0].Status.Phase = corev1.PodPending
				in.WebhookPods[1].DeletionTimestamp = ptr.To(metav1.Now())
				in.WebhookPods[1].Finalizers = []string{"test/keep"}
			},
			want:        map[string]check.Status{check.IDWebhookPods: check.StatusFail},
			wantMessage: map[string][]string{check.IDWebhookPods: {"0 of 2", "(Pending)", "(terminating)"}},
		},
		{
			name:        "no_webhook_pods_fails",
			mutate:      func(_ *testing.T, in *checktest.Install) { in.WebhookPods = nil },
			want:        map[string]check.Status{check.IDWebhookPods: check.StatusFail},
			wantMessage: map[string][]string{check.IDWebhookPods: {"no Pods match app.kubernetes.io/name=snatch-webhook in namespace kyma-system"}},
		},
		{
			name:   "min_ready_webhooks_one",
			mutate: func(_ *testing.T, in *checktest.Install) { in.WebhookPods = in.WebhookPods[:1] },
			config: func(cfg *check.Config) { cfg.MinReadyWebhooks = 1 },
		},
		{
			name:        "lease_missing_fails",
			mutate:      func(_ *testing.T, in *checktest.Install) { in.Lease.Name = "another" },
			want:        map[string]check.Status{check.IDSyncerLease: check.StatusFail},
			wantMessage: map[string][]string{check.IDSyncerLease: {"Lease kyma-system/cabundle-syncer not found"}},
		},
		{
			name:        "lease_released_fails",
			mutate:      func(_ *testing.T, in *checktest.Install) { in.Lease.Spec.HolderIdentity = ptr.To("") },
			want:        map[string]check.Status{check.IDSyncerLease: check.StatusFail},
			wantMessage: map[string][]string{check.IDSyncerLease: {"has no holder"}},
		},
		{
			name: "lease_expired_fails",
			mutate: func(_ *testing.T, in *checktest.Install) {
				in.Lease.Spec.RenewTime = ptr.To(metav1.NewMicroTime(now.Add(-2 * time.Hour)))
			},
			want:        map[string]check.Status{check.IDSyncerLease: check.StatusFail},
			wantMessage: map[string][]string{check.IDSyncerLease: {"expired at " + now.Add(-time.Hour).UTC().Format(time.RFC3339)}},
		},
		{
			name:        "lease_without_renew_time_fails",
			mutate:      func(_ *testing.T, in *checktest.Install) { in.Lease.Spec.RenewTime = nil },
			want:        map[string]check.Status{check.IDSyncerLease: check.StatusFail},
			wantMessage: map[string][]string{check.IDSyncerLease: {"no renewTime"}},
		},
		{
			name:        "syncer_may_patch_the_webhook_configuration",
			wantMessage: map[string][]string{check.IDSyncerLease: {"its ServiceAccount system:serviceaccount:kyma-system:cabundle-syncer may patch MutatingWebhookConfiguration kim-snatch-mutating-webhook-configuration"}},
		},
		{
			name:        "syncer_without_its_binding_fails",
			mutate:      func(_ *testing.T, in *checktest.Install) { in.SyncerBinding = nil },
			want:        map[string]check.Status{check.IDSyncerLease: check.StatusFail},
			wantMessage: map[string][]string{check.IDSyncerLease: {"may not patch MutatingWebhookConfiguration kim-snatch-mutating-webhook-configuration", "next CA rotation"}},
		},
		{
			// A Pod that names no ServiceAccount runs as default.
			name:        "syncer_pod_without_a_service_account_is_asked_for_default",
			mutate:      func(_ *testing.T, in *checktest.Install) { in.SyncerPod.Spec.ServiceAccountName = "" },
			want:        map[string]check.Status{check.IDSyncerLease: check.StatusFail},
			wantMessage: map[string][]string{check.IDSyncerLease: {"its ServiceAccount system:serviceaccount:kyma-system:default may not patch"}},
		},
		{
			name:        "subjectaccessreview_forbidden_skips",
			react:       deny("create", "subjectaccessreviews", forbidden("subjectaccessreviews")),
			want:        map[string]check.Status{check.IDSyncerLease: check.StatusSkip},
			wantMessage: map[string][]string{check.IDSyncerLease: {"held by", "these credentials may not create SubjectAccessReviews"}},
		},
		{
			name:        "holder_pod_missing_warns",
			mutate:      func(_ *testing.T, in *checktest.Install) { in.Lease.Spec.HolderIdentity = ptr.To("laptop_0f6c") },
			want:        map[string]check.Status{check.IDSyncerLease: check.StatusWarn},
			wantMessage: map[string][]string{check.IDSyncerLease: {"Pod kyma-system/laptop does not exist"}},
		},
		{
			name:        "holder_pod_not_running_warns",
			mutate:      func(_ *testing.T, in *checktest.Install) { in.SyncerPod.Status.Phase = corev1.PodFailed },
			want:        map[string]check.Status{check.IDSyncerLease: check.StatusWarn},
			wantMessage: map[string][]string{check.IDSyncerLease: {"is Failed"}},
		},
		{
			name:        "secret_missing_fails_and_skips_the_bundle",
			mutate:      func(_ *testing.T, in *checktest.Install) { in.Secret.Name = "other" },
			want:        map[string]check.Status{check.IDCASecret: check.StatusFail, check.IDCABundle: check.StatusSkip},
			wantMessage: map[string][]string{check.IDCASecret: {"Secret kyma-system/kim-snatch-certificates not found"}, check.IDCABundle: {"no usable CA", check.IDCASecret}},
		},
		{
			name:        "ca_key_missing_fails",
			mutate:      func(_ *testing.T, in *checktest.Install) { delete(in.Secret.Data, "ca.crt") },
			want:        map[string]check.Status{check.IDCASecret: check.StatusFail, check.IDCABundle: check.StatusSkip},
			wantMessage: map[string][]string{check.IDCASecret: {"has no key ca.crt (keys: tls.crt, tls.key)"}},
		},
		{
			name:        "ca_garbage_fails",
			mutate:      func(_ *testing.T, in *checktest.Install) { in.Secret.Data["ca.crt"] = []byte("not\na certificate") },
			want:        map[string]check.Status{check.IDCASecret: check.StatusFail, check.IDCABundle: check.StatusSkip},
			wantMessage: map[string][]string{check.IDCASecret: {"is unparsable"}},
		},
		{
			name: "ca_not_a_ca_fails",
			mutate: func(t *testing.T, in *checktest.Install) {
				in.Secret.Data["ca.crt"] = certtest.MustSelfSigned(t, certtest.Options{DNSNames: []string{"leaf"}, NotBefore: now.Add(-time.Hour), NotAfter: now.Add(time.Hour * 24 * 90)}).CertPEM
			},
			want:        map[string]check.Status{check.IDCASecret: check.StatusFail, check.IDCABundle: check.StatusSkip},
			wantMessage: map[string][]string{check.IDCASecret: {"is not-ca", `"CN=leaf"`}},
		},
		{
			name: "ca_expired_fails",
			mutate: func(t *testing.T, in *checktest.Install) {
				in.Secret.Data["ca.crt"] = certtest.MustCA(t, certtest.Options{CommonName: "old", NotBefore: now.Add(-48 * time.Hour), NotAfter: now.Add(-time.Hour)}).CertPEM
			},
			want:        map[string]check.Status{check.IDCASecret: check.StatusFail, check.IDCABundle: check.StatusSkip},
			wantMessage: map[string][]string{check.IDCASecret: {"is expired"}},
		},
		{
			name: "ca_expiring_warns_and_the_bundle_is_still_compared",
			mutate: func(t *testing.T, in *checktest.Install) {
				soon := certtest.MustCA(t, certtest.Options{CommonName: "soon", NotBefore: now.Add(-time.Hour), NotAfter: now.Add(71 * time.Hour)})
				in.Secret.Data["ca.crt"] = soon.CertPEM
				for i := range in.MWC.Webhooks {
					in.MWC.Webhooks[i].ClientConfig.CABundle = append(append([]byte{}, soon.CertPEM...), in.CA.CertPEM...)
				}
			},
			want:        map[string]check.Status{check.IDCASecret: check.StatusWarn},
			wantMessage: map[string][]string{check.IDCASecret: {`CA "soon"`, "in 2d22h", "less than --min-ca-validity 168h0m0s"}},
		},
		{
			name: "newest_of_several_cas_is_current",
			mutate: func(t *testing.T, in *checktest.Install) {
				older := certtest.MustCA(t, certtest.Options{CommonName: "older", NotBefore: now.Add(-30 * 24 * time.Hour), NotAfter: now.Add(60 * 24 * time.Hour)})
				in.Secret.Data["ca.crt"] = append(append([]byte{}, older.CertPEM...), in.CA.CertPEM...)
			},
			wantMessage: map[string][]string{check.IDCASecret: {`CA "snatch-webhook.kyma-system.svc"`, "and 1 older CA(s)"}},
		},
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
			name: "bundle_wiped_fails_naming_the_entry",
			mutate: func(_ *testing.T, in *checktest.Install) {
				addLegacyEntry(in)
				in.MWC.Webhooks[0].ClientConfig.CABundle = nil
			},
			// The API server cannot verify the webhook for that entry;
			// ca-bundle says so, and there is nothing to verify with.
			want:        map[string]check.Status{check.IDCABundle: check.StatusFail, check.IDServedCertificate: check.StatusSkip},
			wantMessage: map[string][]string{check.IDCABundle: {"entries without the CA", "(1 of 2): pods.kim-snatch.kyma-project.io (caBundle is empty)"}},
		},
		{
			name: "bundle_with_another_ca_fails",
			mutate: func(t *testing.T, in *checktest.Install) {
				addLegacyEntry(in)
				for i := range in.MWC.Webhooks {
					in.MWC.Webhooks[i].ClientConfig.CABundle = certtest.MustCA(t, certtest.Options{CommonName: "other"}).CertPEM
				}
			},
			// Both are true: the caBundle lacks the Secret's CA, and the
			// replicas' certificates do not verify against it.
			want: map[string]check.Status{check.IDCABundle: check.StatusFail, check.IDServedCertificate: check.StatusFail},
			wantMessage: map[string][]string{
				check.IDCABundle:          {"(2 of 2)", "caBundle holds 1 other certificate(s)"},
				check.IDServedCertificate: {"endpoints serve a certificate that does not verify for snatch-webhook.kyma-system.svc against the caBundle"},
			},
		},
		{
			name: "bundle_with_the_previous_ca_too_passes",
			mutate: func(t *testing.T, in *checktest.Install) {
				for i := range in.MWC.Webhooks {
					in.MWC.Webhooks[i].ClientConfig.CABundle = append(append([]byte{}, in.CA.CertPEM...), certtest.MustCA(t, certtest.Options{CommonName: "previous"}).CertPEM...)
				}
			},
		},
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
			name: "secret_read_error_fails_only_that_check",
			react: func(cs *fake.Clientset) {
				cs.PrependReactor("get", "secrets", func(k8stesting.Action) (bool, runtime.Object, error) {
					return true, nil, errors.New("connection reset by peer")
				})
			},
			want:        map[string]check.Status{check.IDCASecret: check.StatusFail, check.IDCABundle: check.StatusSkip},
			wantMessage: map[string][]string{check.IDCASecret: {"could not read Secret kyma-system/kim-snatch-certificates", "connection reset"}},
		},
		// Access denied is one rule for every object: the item is not seen
		// (SKIP) and the run is INCOMPLETE, never a PASS and never a FAIL
		// of an installation the credentials cannot see.
		{
			name:        "secret_forbidden_skips",
			react:       deny("get", "secrets", forbidden("secrets")),
			want:        map[string]check.Status{check.IDCASecret: check.StatusSkip, check.IDCABundle: check.StatusSkip},
			wantMessage: map[string][]string{check.IDCASecret: {"these credentials may not get Secret kyma-system/kim-snatch-certificates", "forbidden"}},
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
			name:        "lease_forbidden_skips",
			react:       deny("get", "leases", forbidden("leases")),
			want:        map[string]check.Status{check.IDSyncerLease: check.StatusSkip},
			wantMessage: map[string][]string{check.IDSyncerLease: {"these credentials may not get Lease kyma-system/cabundle-syncer"}},
		},
		{
			name:        "lease_unauthorized_skips",
			react:       deny("get", "leases", apierrors.NewUnauthorized("token expired")),
			want:        map[string]check.Status{check.IDSyncerLease: check.StatusSkip},
			wantMessage: map[string][]string{check.IDSyncerLease: {"these credentials may not get Lease", "token expired"}},
		},
		{
			name: "pod_list_error_fails_the_checks_that_list_pods",
			react: func(cs *fake.Clientset) {
				cs.PrependReactor("list", "pods", func(k8stesting.Action) (bool, runtime.Object, error) {
					return true, nil, errors.New("connection reset\nby peer")
				})
			},
			want: map[string]check.Status{check.IDWebhookPods: check.StatusFail, check.IDPlacement: check.StatusFail},
			wantMessage: map[string][]string{
				check.IDWebhookPods: {"could not read Pods app.kubernetes.io/name=snatch-webhook in kyma-system: connection reset by peer"},
				check.IDPlacement:   {"could not read Pods: connection reset by peer"},
			},
		},
		{
			name:        "kyma_pool_reports_its_room",
			extra:       []runtime.Object{withTerm(requesting("kyma-system", "app-1", "cpu-worker-0-2", "1500m", "3Gi")), requesting("shop", "web-1", "customer-1", "2", "1Gi")},
			wantMessage: map[string][]string{check.IDKymaPool: {"pool cpu-worker-0 (the default): 2 Nodes, 2 Ready and schedulable", "CPU requested 1500m of 8 allocatable, memory 3Gi of 32Gi"}},
		},
		{
			name: "kyma_pool_missing_fails_naming_the_pools_present",
			mutate: func(_ *testing.T, in *checktest.Install) {
				in.Nodes = []*corev1.Node{checktest.PoolNode("customer-1", "customer"), checktest.PoolNode("customer-2", "customer"), checktest.PoolNode("infra-1", "infra")}
				in.SyncerPod.Spec.NodeName = "customer-1"
			},
			// Without the pool the syncer, a Kyma Pod, runs off it.
			want: map[string]check.Status{check.IDKymaPool: check.StatusFail, check.IDPlacement: check.StatusWarn},
			wantMessage: map[string][]string{
				check.IDKymaPool:  {"no Node carries worker.gardener.cloud/pool=cpu-worker-0", "--worker-pool", "pools present: customer (2), infra (1)"},
				check.IDPlacement: {"0 lack the term, 1 carry it but run off pool cpu-worker-0 (pool missing: 1)"},
			},
		},
		{
			name: "kyma_pool_of_the_webhook_pods_flag_is_the_one_checked",
			mutate: func(_ *testing.T, in *checktest.Install) {
				for _, p := range in.WebhookPods {
					p.Spec.Containers[0].Args = []string{"--cert-dir=/certs", "--worker-pool=cpu-worker-9"}
				}
			},
			react:       admitTerms(poolTerm("cpu-worker-9", 10)),
			want:        map[string]check.Status{check.IDKymaPool: check.StatusFail},
			wantMessage: map[string][]string{check.IDKymaPool: {"pool=cpu-worker-9", "from Pod snatch-webhook-", "pools present: cpu-worker-0 (2)"}},
		},
		{
			// The binary takes the value as the next argument too.
			name: "kyma_pool_of_the_webhook_pods_flag_with_a_separate_value",
			mutate: func(_ *testing.T, in *checktest.Install) {
				for _, p := range in.WebhookPods {
					p.Spec.Containers[0].Args = []string{"--cert-dir", "/certs", "--worker-pool", "cpu-worker-9"}
				}
			},
			react:       admitTerms(poolTerm("cpu-worker-9", 10)),
			want:        map[string]check.Status{check.IDKymaPool: check.StatusFail},
			wantMessage: map[string][]string{check.IDKymaPool: {"pool=cpu-worker-9", "from Pod snatch-webhook-", "pools present: cpu-worker-0 (2)"}},
		},
		{
			name: "kyma_pool_without_a_schedulable_node_warns",
			mutate: func(_ *testing.T, in *checktest.Install) {
				in.Nodes[0].Spec.Unschedulable = true
				in.Nodes[1].Status.Conditions[0].Status = corev1.ConditionFalse
			},
			want:        map[string]check.Status{check.IDKymaPool: check.StatusWarn},
			wantMessage: map[string][]string{check.IDKymaPool: {"2 Nodes, 0 Ready and schedulable"}},
		},
		{
			name: "kyma_pool_tainted_nodes_are_not_room",
			mutate: func(_ *testing.T, in *checktest.Install) {
				in.Nodes[0].Spec.Taints = []corev1.Taint{{Key: "dedicated", Value: "gpu", Effect: corev1.TaintEffectNoSchedule}}
				in.Nodes[1].Spec.Taints = []corev1.Taint{{Key: "soft", Effect: corev1.TaintEffectPreferNoSchedule}}
			},
			wantMessage: map[string][]string{check.IDKymaPool: {"2 Nodes, 1 Ready and schedulable; 1 Ready but tainted, not room for Kyma Pods: cpu-worker-0-1 (dedicated=gpu:NoSchedule)"}},
		},
		{
			name: "kyma_pool_with_every_node_tainted_warns",
			mutate: func(_ *testing.T, in *checktest.Install) {
				in.Nodes[0].Spec.Taints = []corev1.Taint{{Key: "dedicated", Value: "gpu", Effect: corev1.TaintEffectNoSchedule}}
				in.Nodes[1].Spec.Taints = []corev1.Taint{{Key: "draining", Effect: corev1.TaintEffectNoExecute}}
			},
			want:        map[string]check.Status{check.IDKymaPool: check.StatusWarn},
			wantMessage: map[string][]string{check.IDKymaPool: {"2 Nodes, 0 Ready and schedulable; 2 Ready but tainted", "cpu-worker-0-2 (draining:NoExecute)"}},
		},
		{
			name: "kyma_pool_nodes_forbidden_skips",
			react: func(cs *fake.Clientset) {
				cs.PrependReactor("list", "nodes", func(k8stesting.Action) (bool, runtime.Object, error) {
					return true, nil, apierrors.NewForbidden(schema.GroupResource{Resource: "nodes"}, "", errors.New("no RBAC"))
				})
			},
			want:        map[string]check.Status{check.IDKymaPool: check.StatusSkip},
			wantMessage: map[string][]string{check.IDKymaPool: {"may not list Nodes"}},
		},
		{
			// The syncer's ServiceAccount, as check runs in its Pod: no Pods.
			name: "pods_forbidden_skips_webhook_pods_and_the_lease_holder",
			react: func(cs *fake.Clientset) {
				forbidden := func(k8stesting.Action) (bool, runtime.Object, error) {
					return true, nil, apierrors.NewForbidden(schema.GroupResource{Resource: "pods"}, "", errors.New("no RBAC"))
				}
				cs.PrependReactor("list", "pods", forbidden)
				cs.PrependReactor("get", "pods", forbidden)
			},
			want: map[string]check.Status{check.IDWebhookPods: check.StatusSkip, check.IDSyncerLease: check.StatusSkip, check.IDPlacement: check.StatusSkip},
			wantMessage: map[string][]string{
				check.IDWebhookPods: {"these credentials may not list Pods in kyma-system, so this was not checked", "forbidden"},
				check.IDSyncerLease: {"held by", "was not looked at: these credentials may not get Pods"},
			},
		},
		{
			name:   "target_namespace_forbidden_skips",
			config: func(cfg *check.Config) { cfg.TargetNamespace = "istio-system" },
			react: func(cs *fake.Clientset) {
				cs.PrependReactor("get", "namespaces", func(k8stesting.Action) (bool, runtime.Object, error) {
					return true, nil, apierrors.NewForbidden(schema.GroupResource{Resource: "namespaces"}, "istio-system", errors.New("no RBAC"))
				})
			},
			want:        map[string]check.Status{check.IDNamespace: check.StatusSkip},
			wantMessage: map[string][]string{check.IDNamespace: {"these credentials may not get Namespace istio-system"}},
		},
		{
			name: "webhook_configuration_read_error_fails_and_skips",
			react: func(cs *fake.Clientset) {
				cs.PrependReactor("get", "mutatingwebhookconfigurations", func(k8stesting.Action) (bool, runtime.Object, error) {
					return true, nil, apierrors.NewServiceUnavailable("etcd is down")
				})
			},
			want: map[string]check.Status{
				check.IDWebhookConfiguration: check.StatusFail, check.IDCABundle: check.StatusSkip,
				check.IDWebhookEndpoints: check.StatusSkip, check.IDServedCertificate: check.StatusSkip,
				check.IDAdmission: check.StatusSkip,
			},
			wantMessage: map[string][]string{check.IDCABundle: {"could not be read"}, check.IDAdmission: {"to tell whose term it is"}},
		},
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
			name: "replica_serving_another_ca_fails_naming_it",
			mutate: func(t *testing.T, in *checktest.Install) {
				other := certtest.MustCA(t, certtest.Options{DNSNames: []string{"snatch-webhook.kyma-system.svc"}})
				in.EndpointSlices[1] = checktest.EndpointSlice(in.Service, in.WebhookPods[1].Name, checktest.Serve(t, other.TLSCertificate()))
			},
			want: map[string]check.Status{check.IDServedCertificate: check.StatusFail},
			wantMessage: map[string][]string{check.IDServedCertificate: {
				"1 of 2 endpoints serve a certificate that does not verify for snatch-webhook.kyma-system.svc",
				"(Pod snatch-webhook-5c8d7f9b6-fghij): serial ",
			}},
		},
		{
			name: "replica_serving_the_ca_for_another_name_fails",
			mutate: func(t *testing.T, in *checktest.Install) {
				// The caBundle trusts this certificate, but it does not name
				// the Service, as after a Service was renamed.
				other := certtest.MustCA(t, certtest.Options{DNSNames: []string{"kim-snatch-webhook-service.kyma-system.svc"}})
				for i := range in.MWC.Webhooks {
					in.MWC.Webhooks[i].ClientConfig.CABundle = append(append([]byte{}, in.CA.CertPEM...), other.CertPEM...)
				}
				in.EndpointSlices[0] = checktest.EndpointSlice(in.Service, in.WebhookPods[0].Name, checktest.Serve(t, other.TLSCertificate()))
			},
			want:        map[string]check.Status{check.IDServedCertificate: check.StatusFail},
			wantMessage: map[string][]string{check.IDServedCertificate: {"(Pod snatch-webhook-5c8d7f9b6-abcde)"}},
		},
		{
			name: "endpoint_out_of_reach_warns",
			mutate: func(t *testing.T, in *checktest.Install) {
				in.EndpointSlices[0] = checktest.EndpointSlice(in.Service, in.WebhookPods[0].Name, closedAddr(t))
			},
			want:        map[string]check.Status{check.IDServedCertificate: check.StatusWarn},
			wantMessage: map[string][]string{check.IDServedCertificate: {"1 of 2 endpoints could not be reached from where check runs", "; 1 verify"}},
		},
		{
			// In a Pod of the cluster every Pod address is in reach: only
			// a NetworkPolicy or a dead listener keeps the check out.
			name: "endpoint_out_of_reach_in_the_cluster_fails",
			mutate: func(t *testing.T, in *checktest.Install) {
				in.EndpointSlices[0] = checktest.EndpointSlice(in.Service, in.WebhookPods[0].Name, closedAddr(t))
			},
			config:      func(cfg *check.Config) { cfg.InCluster = true },
			want:        map[string]check.Status{check.IDServedCertificate: check.StatusFail},
			wantMessage: map[string][]string{check.IDServedCertificate: {"1 of 2 endpoints could not be reached from this Pod of the cluster", "; 1 verify"}},
		},
		{
			name: "admission_pod_without_the_term_fails",
			react: func(cs *fake.Clientset) {
				cs.PrependReactor("create", "pods", func(a k8stesting.Action) (bool, runtime.Object, error) {
					return true, a.(k8stesting.CreateAction).GetObject(), nil
				})
			},
			want:        map[string]check.Status{check.IDAdmission: check.StatusFail},
			wantMessage: map[string][]string{check.IDAdmission: {"came back without the term on worker.gardener.cloud/pool", "could not call the webhook"}},
		},
		{
			name:        "admission_term_of_another_weight_passes",
			react:       admitTerms(poolTerm(affinity.DefaultWorkerPool, 42)),
			wantMessage: map[string][]string{check.IDAdmission: {"the webhook's term worker.gardener.cloud/pool In [cpu-worker-0] (weight 42)", "pool the default"}},
		},
		{
			// The webhook Pods run with --worker-pool=cpu-worker-0 as deploy/
			// ships; a term for another pool is not the webhook's.
			name:        "admission_term_for_another_pool_fails",
			react:       admitTerms(poolTerm("customer-pool", 10)),
			want:        map[string]check.Status{check.IDAdmission: check.StatusFail},
			wantMessage: map[string][]string{check.IDAdmission: {"with worker.gardener.cloud/pool In [customer-pool] (weight 10), not the webhook's term worker.gardener.cloud/pool In [cpu-worker-0]"}},
		},
		{
			name:        "admission_two_terms_on_the_key_fail",
			react:       admitTerms(poolTerm(affinity.DefaultWorkerPool, 10), poolTerm(affinity.DefaultWorkerPool, 10)),
			want:        map[string]check.Status{check.IDAdmission: check.StatusFail},
			wantMessage: map[string][]string{check.IDAdmission: {"2 preferred terms on worker.gardener.cloud/pool", "more than one webhook"}},
		},
		{
			name: "admission_term_with_another_expression_fails",
			react: func() func(*fake.Clientset) {
				t := poolTerm(affinity.DefaultWorkerPool, 10)
				t.Preference.MatchExpressions = append(t.Preference.MatchExpressions, corev1.NodeSelectorRequirement{Key: "disk", Operator: corev1.NodeSelectorOpExists})
				return admitTerms(t)
			}(),
			want:        map[string]check.Status{check.IDAdmission: check.StatusFail},
			wantMessage: map[string][]string{check.IDAdmission: {"disk Exists []", "not the webhook's term"}},
		},
		{
			// Migration steps 2 to 5: the MWC's one entry still calls the old
			// kim-snatch, whose term has the webhook's shape.
			name: "admission_term_while_no_entry_calls_the_webhook_fails",
			mutate: func(_ *testing.T, in *checktest.Install) {
				in.MWC.Webhooks[0].Name = "mpod-v1.kb.io"
				in.MWC.Webhooks[0].ClientConfig.Service.Name = "kim-snatch-webhook-service"
			},
			want: map[string]check.Status{check.IDAdmission: check.StatusFail, check.IDWebhookEndpoints: check.StatusFail, check.IDServedCertificate: check.StatusSkip},
			wantMessage: map[string][]string{check.IDAdmission: {
				"no entry of MutatingWebhookConfiguration kim-snatch-mutating-webhook-configuration calls Service kyma-system/snatch-webhook", "another webhook added it"}},
		},
		{
			name: "admission_forbidden_skips",
			react: func(cs *fake.Clientset) {
				cs.PrependReactor("create", "pods", func(k8stesting.Action) (bool, runtime.Object, error) {
					return true, nil, apierrors.NewForbidden(schema.GroupResource{Resource: "pods"}, "", errors.New(`User "x" cannot create resource "pods"`))
				})
			},
			want:        map[string]check.Status{check.IDAdmission: check.StatusSkip},
			wantMessage: map[string][]string{check.IDAdmission: {"these credentials may not create Pods in kyma-system"}},
		},
		{
			name:        "admission_namespace_missing_fails",
			react:       deny("create", "pods", apierrors.NewNotFound(schema.GroupResource{Resource: "namespaces"}, testNamespace)),
			want:        map[string]check.Status{check.IDAdmission: check.StatusFail},
			wantMessage: map[string][]string{check.IDAdmission: {"where the dry run goes, not found"}},
		},
		{
			name: "admission_refused_by_quota_fails",
			react: func(cs *fake.Clientset) {
				cs.PrependReactor("create", "pods", func(k8stesting.Action) (bool, runtime.Object, error) {
					return true, nil, apierrors.NewForbidden(schema.GroupResource{Resource: "pods"}, "x", errors.New("exceeded quota: kim-snatch-check"))
				})
			},
			want:        map[string]check.Status{check.IDAdmission: check.StatusFail},
			wantMessage: map[string][]string{check.IDAdmission: {"refused", "exceeded quota"}},
		},
		{
			name: "services_forbidden_skips",
			react: func(cs *fake.Clientset) {
				cs.PrependReactor("get", "services", func(k8stesting.Action) (bool, runtime.Object, error) {
					return true, nil, apierrors.NewForbidden(schema.GroupResource{Resource: "services"}, "snatch-webhook", errors.New("no RBAC"))
				})
			},
			want:        map[string]check.Status{check.IDWebhookEndpoints: check.StatusSkip, check.IDServedCertificate: check.StatusSkip},
			wantMessage: map[string][]string{check.IDWebhookEndpoints: {"these credentials may not get Services and list EndpointSlices in kyma-system"}},
		},
	}
	// failed collects the remediation of every FAIL the cases render.
	failed := map[string][]string{}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := checktest.Healthy(t, testNamespace, checktest.WebhookConfiguration, now)
			cfg := in.Config()
			if tt.mutate != nil {
				tt.mutate(t, in)
			}
			cs := fake.NewClientset(append(in.Objects(), tt.extra...)...)
			checktest.Admit(cs)
			in.Authorize(cs)
			if tt.react != nil {
				tt.react(cs)
			}
			if tt.config != nil {
				tt.config(&cfg)
			}
			report := check.Run(context.Background(), cs, cfg, now)

			ids := allIDs
			if cfg.TargetNamespace != "" {
				ids = append(ids[:len(ids):len(ids)], check.IDNamespace)
			}
			assertReport(t, report, ids, tt.want)
			for _, r := range report.Checks {
				if r.Status == check.StatusFail {
					failed[r.ID] = append(failed[r.ID], r.Remediation)
				}
				for _, w := range tt.wantMessage[r.ID] {
					if !strings.Contains(r.Message, w) {
						t.Errorf("%s: message %q\nwant it to contain %q", r.ID, r.Message, w)
					}
				}
			}
		})
	}
	// assertReport holds every remediation to the rule; this makes sure
	// that every item's FAIL was rendered and so held to it.
	t.Run("every_item_fails_in_some_case", func(t *testing.T) {
		for _, id := range append(allIDs[:len(allIDs):len(allIDs)], check.IDNamespace) {
			if len(failed[id]) == 0 {
				t.Errorf("no case makes %s FAIL, so its advice is not checked", id)
			}
		}
	})
}

// appliesTheBases matches advice that applies the bases of deploy/, such as
// kubectl apply -k deploy/webhook: their image is a placeholder that no
// registry holds, so following it turns an outage into ImagePullBackOff.
var appliesTheBases = regexp.MustCompile(`apply\b[^;.]*\s-(k|f|-kustomize|-filename)(\s+|=)deploy/`)

// assertReport checks the order of the results, that the checks in want
// have that status and every other one passes, the rules for messages and
// remediations, and the overall status.
func assertReport(t *testing.T, report check.Report, ids []string, want map[string]check.Status) {
	t.Helper()
	if len(report.Checks) != len(ids) {
		t.Fatalf("%d results, want %d (%v): %+v", len(report.Checks), len(ids), ids, report.Checks)
	}
	wantOverall := check.StatusPass
	for i, r := range report.Checks {
		if r.ID != ids[i] {
			t.Errorf("result %d is %s, want %s", i, r.ID, ids[i])
		}
		w, ok := want[r.ID]
		if !ok {
			w = check.StatusPass
		}
		if r.Status != w {
			t.Errorf("%s = %s (%s), want %s", r.ID, r.Status, r.Message, w)
		}
		switch w {
		case check.StatusFail:
			wantOverall = check.StatusFail
		case check.StatusSkip:
			if wantOverall != check.StatusFail {
				wantOverall = check.StatusIncomplete
			}
		case check.StatusWarn:
			if wantOverall == check.StatusPass {
				wantOverall = check.StatusWarn
			}
		}
		if r.Message == "" || strings.Contains(r.Message, "\n") {
			t.Errorf("%s: message %q, want one non-empty line", r.ID, r.Message)
		}
		if (r.Status == check.StatusPass) != (r.Remediation == "") {
			t.Errorf("%s %s: remediation %q, want one exactly when the check did not pass", r.ID, r.Status, r.Remediation)
		}
		if strings.Contains(r.Remediation, "\n") {
			t.Errorf("%s: remediation %q spans lines", r.ID, r.Remediation)
		}
		if appliesTheBases.MatchString(r.Remediation) || strings.Contains(r.Remediation, "apply -k deploy/") {
			t.Errorf("%s %s: remediation %q applies the bases of deploy/; advise applying the installed release again", r.ID, r.Status, r.Remediation)
		}
	}
	if report.Status != wantOverall {
		t.Errorf("report status = %s, want %s", report.Status, wantOverall)
	}
}

// addLegacyEntry adds a second entry like the first, as configurations
// that still call kim-snatch's old path have.
func addLegacyEntry(in *checktest.Install) {
	legacy := *in.MWC.Webhooks[0].DeepCopy()
	legacy.Name = "pods-legacy.kim-snatch.kyma-project.io"
	in.MWC.Webhooks = append(in.MWC.Webhooks, legacy)
}

func namespace(name string, labels map[string]string) *corev1.Namespace {
	all := map[string]string{corev1.LabelMetadataName: name}
	for k, v := range labels {
		all[k] = v
	}
	return &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: all}}
}

// withTerm gives p the webhook's term, as a Kyma Pod created through it has.
func withTerm(p *corev1.Pod) *corev1.Pod {
	p.Spec.Affinity = &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{
		PreferredDuringSchedulingIgnoredDuringExecution: []corev1.PreferredSchedulingTerm{affinity.DefaultPolicy().Term()},
	}}
	return p
}

// requesting is a Running Pod on node that requests cpu and memory.
func requesting(namespace, name, node, cpu, memory string) *corev1.Pod {
	p := checktest.RunningPod(namespace, name, nil)
	p.Spec.NodeName = node
	p.Spec.Containers[0].Resources.Requests = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpu), corev1.ResourceMemory: resource.MustParse(memory)}
	return p
}

// closedAddr returns a loopback address where nothing listens.
func closedAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	_ = l.Close()
	return addr
}

// deny makes the fake API server refuse verb on resource with err.
func deny(verb, resource string, err error) func(*fake.Clientset) {
	return func(cs *fake.Clientset) {
		cs.PrependReactor(verb, resource, func(k8stesting.Action) (bool, runtime.Object, error) { return true, nil, err })
	}
}

// forbidden is the API server's 403 for resource.
func forbidden(resource string) error {
	return apierrors.NewForbidden(schema.GroupResource{Resource: resource}, "", errors.New("no RBAC"))
}

// poolTerm is a preferred term on the pool key for pool, with weight.
func poolTerm(pool string, weight int32) corev1.PreferredSchedulingTerm {
	p := affinity.DefaultPolicy()
	p.WorkerPool, p.Weight = pool, weight
	return p.Term()
}

// admitTerms makes the fake API server answer a Pod create with terms, as
// the webhooks in its way would have added them.
func admitTerms(terms ...corev1.PreferredSchedulingTerm) func(*fake.Clientset) {
	return func(cs *fake.Clientset) {
		cs.PrependReactor("create", "pods", func(a k8stesting.Action) (bool, runtime.Object, error) {
			p := a.(k8stesting.CreateAction).GetObject().(*corev1.Pod).DeepCopy()
			p.Spec.Affinity = &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{PreferredDuringSchedulingIgnoredDuringExecution: terms}}
			return true, p, nil
		})
	}
}

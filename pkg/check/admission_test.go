package check_test

import (
	"errors"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"

	"github.com/kyma-project/kim-snatch/pkg/affinity"
	"github.com/kyma-project/kim-snatch/pkg/check"
	"github.com/kyma-project/kim-snatch/pkg/check/checktest"
)

func TestAdmissionFailsUnlessTheDryRunGetsTheWebhooksTerm(t *testing.T) {
	now := time.Now()
	runChecklist(t, now, []string{check.IDAdmission}, []checklistCase{
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
			react: deny("create", "pods", apierrors.NewForbidden(schema.GroupResource{Resource: "pods"}, "",
				errors.New(`User "x" cannot create resource "pods"`))),
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
			react: deny("create", "pods", apierrors.NewForbidden(schema.GroupResource{Resource: "pods"}, "x",
				errors.New("exceeded quota: kim-snatch-check"))),
			want:        map[string]check.Status{check.IDAdmission: check.StatusFail},
			wantMessage: map[string][]string{check.IDAdmission: {"refused", "exceeded quota"}},
		},
	})
}

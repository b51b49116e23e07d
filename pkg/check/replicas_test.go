package check_test

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/kyma-project/kim-snatch/pkg/check"
	"github.com/kyma-project/kim-snatch/pkg/check/checktest"
)

func TestWebhookPodsFailWithoutEnoughReadyReplicas(t *testing.T) {
	now := time.Now()
	runChecklist(t, now, []string{check.IDWebhookPods}, []checklistCase{
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
			name:   "one_ready_webhook_pod_passes_at_min_ready_1",
			mutate: func(_ *testing.T, in *checktest.Install) { in.WebhookPods = in.WebhookPods[:1] },
			config: func(cfg *check.Config) { cfg.MinReadyWebhooks = 1 },
		},
	})
}

func TestSyncerLeaseFailsWithoutALiveHolderThatMayPatch(t *testing.T) {
	now := time.Now()
	runChecklist(t, now, []string{check.IDSyncerLease}, []checklistCase{
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
			name:        "syncer_allowed_to_patch_passes",
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
	})
}

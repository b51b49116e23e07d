package check_test

import (
	"errors"
	"testing"
	"time"

	"k8s.io/client-go/kubernetes/fake"

	"github.com/kyma-project/kim-snatch/pkg/check"
)

// The whole checklist: a healthy install passes every item, and an error
// reading one kind of object fails or skips only the items that read it.
func TestRunPassesAHealthyInstallAndBlamesAReadErrorOnlyOnTheChecksThatNeedIt(t *testing.T) {
	now := time.Now()
	runChecklist(t, now, []string{check.IDPlacement}, []checklistCase{
		{
			name: "healthy_install_passes",
			wantMessage: map[string][]string{
				check.IDWebhookPods:          {"2 of 2 webhook Pods ready", "snatch-webhook-5c8d7f9b6-abcde"},
				check.IDSyncerLease:          {"held by cabundle-syncer-7d9f8c6b5-x2k4q_", "Pod kyma-system/cabundle-syncer-7d9f8c6b5-x2k4q is Running"},
				check.IDCASecret:             {"Secret kyma-system/kim-snatch-certificates key ca.crt", "valid until"},
				check.IDWebhookConfiguration: {"1 entry (pods.kim-snatch.kyma-project.io)"},
				check.IDCABundle:             {"the 1 entry of kim-snatch-mutating-webhook-configuration trusts the CA"},
			},
		},
		{
			name:  "pod_list_error_fails_the_checks_that_list_pods",
			react: deny("list", "pods", errors.New("connection reset\nby peer")),
			want:  map[string]check.Status{check.IDWebhookPods: check.StatusFail, check.IDPlacement: check.StatusFail},
			wantMessage: map[string][]string{
				check.IDWebhookPods: {"could not read Pods app.kubernetes.io/name=snatch-webhook in kyma-system: connection reset by peer"},
				check.IDPlacement:   {"could not read Pods: connection reset by peer"},
			},
		},
		{
			// The syncer's ServiceAccount, as check runs in its Pod: no Pods.
			name: "pods_forbidden_skips_webhook_pods_and_the_lease_holder",
			react: func(cs *fake.Clientset) {
				deny("list", "pods", forbidden("pods"))(cs)
				deny("get", "pods", forbidden("pods"))(cs)
			},
			want: map[string]check.Status{check.IDWebhookPods: check.StatusSkip, check.IDSyncerLease: check.StatusSkip, check.IDPlacement: check.StatusSkip},
			wantMessage: map[string][]string{
				check.IDWebhookPods: {"these credentials may not list Pods in kyma-system, so this was not checked", "forbidden"},
				check.IDSyncerLease: {"held by", "was not looked at: these credentials may not get Pods"},
			},
		},
	})
}

package check_test

import (
	"errors"
	"testing"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"
	"k8s.io/utils/ptr"

	"github.com/kyma-project/kim-snatch/pkg/check"
	"github.com/kyma-project/kim-snatch/pkg/check/checktest"
	"github.com/kyma-project/kim-snatch/pkg/syncer"
	"github.com/kyma-project/kim-snatch/pkg/syncer/syncertest"
)

// disableReason is what the operator wrote into the marker.
const disableReason = "webhook suspected of slowing Pod creation"

// marker is the emergency-disable ConfigMap, as the documented disable
// creates it beside the Secret.
func marker() *corev1.ConfigMap {
	return syncertest.DisableMarker(testNamespace, syncer.EmergencyDisableName, disableReason, "oncall@example.com")
}

// withoutMWC deletes the MWC, as the disable does: the install's MWC gets
// another name, so that the one check looks for does not exist.
func withoutMWC(_ *testing.T, in *checktest.Install) { in.MWC.Name = "other" }

// admitUntouched makes the fake API server answer a Pod create as it does
// without a webhook: the Pod comes back as sent, without a term.
func admitUntouched(cs *fake.Clientset) {
	cs.PrependReactor("create", "pods", func(a k8stesting.Action) (bool, runtime.Object, error) {
		return true, a.(k8stesting.CreateAction).GetObject(), nil
	})
}

// needMWC are the items that SKIP without the MWC, as they do without
// the disable.
var needMWC = map[string]check.Status{
	check.IDCABundle: check.StatusSkip, check.IDWebhookEndpoints: check.StatusSkip,
	check.IDServedCertificate: check.StatusSkip,
}

// with returns a copy of statuses with the further ones set.
func with(statuses map[string]check.Status, more map[string]check.Status) map[string]check.Status {
	out := map[string]check.Status{}
	for _, m := range []map[string]check.Status{statuses, more} {
		for id, s := range m {
			out[id] = s
		}
	}
	return out
}

// The emergency disable: the marker turns the MWC's absence from a FAIL
// into a WARN that names it and the restore, and is itself a WARN beside
// an MWC that is back.
func TestEmergencyDisableWarnsInsteadOfFailing(t *testing.T) {
	now := time.Now()
	runChecklist(t, now, []string{check.IDWebhookConfiguration}, []checklistCase{
		{
			name:   "marker_without_mwc_warns_and_skips_what_needs_the_mwc",
			mutate: withoutMWC,
			extra:  []runtime.Object{marker()},
			react:  admitUntouched,
			want: with(needMWC, map[string]check.Status{
				check.IDWebhookConfiguration: check.StatusWarn, check.IDAdmission: check.StatusWarn,
			}),
			wantMessage: map[string][]string{
				check.IDWebhookConfiguration: {"not found, under the emergency disable",
					"ConfigMap kyma-system/kim-snatch-emergency-disable", `reason "` + disableReason + `"`},
				check.IDAdmission: {"came back without the term", "as the emergency disable has it"},
			},
		},
		{
			// The disable deleted the MWC, so a term comes from another webhook.
			name:   "marker_without_mwc_and_a_term_fails_admission",
			mutate: withoutMWC,
			extra:  []runtime.Object{marker()},
			want: with(needMWC, map[string]check.Status{
				check.IDWebhookConfiguration: check.StatusWarn, check.IDAdmission: check.StatusFail,
			}),
			wantMessage: map[string][]string{check.IDAdmission: {"does not exist: another webhook added it"}},
		},
		{
			name:  "marker_beside_the_mwc_warns",
			extra: []runtime.Object{marker()},
			want:  map[string]check.Status{check.IDWebhookConfiguration: check.StatusWarn},
			wantMessage: map[string][]string{check.IDWebhookConfiguration: {
				"send Pod CREATE", "the emergency-disable marker is still there", disableReason}},
		},
		{
			name:  "marker_beside_a_wrong_mwc_fails",
			extra: []runtime.Object{marker()},
			mutate: func(_ *testing.T, in *checktest.Install) {
				in.MWC.Webhooks[0].FailurePolicy = ptr.To(admissionregistrationv1.Fail)
			},
			want: map[string]check.Status{check.IDWebhookConfiguration: check.StatusFail},
		},
		{
			name:   "no_marker_without_mwc_fails",
			mutate: withoutMWC,
			react:  admitUntouched,
			want: with(needMWC, map[string]check.Status{
				check.IDWebhookConfiguration: check.StatusFail, check.IDAdmission: check.StatusFail,
			}),
			wantMessage: map[string][]string{
				check.IDWebhookConfiguration: {"kim-snatch-mutating-webhook-configuration not found; the API server calls no webhook"},
				check.IDAdmission:            {"could not call the webhook"},
			},
		},
		{
			// Whether the MWC is missing by design cannot be told: not seen.
			name:   "marker_denied_without_mwc_skips",
			mutate: withoutMWC,
			react:  deny("get", "configmaps", forbidden("configmaps")),
			want: with(needMWC, map[string]check.Status{
				check.IDWebhookConfiguration: check.StatusSkip, check.IDAdmission: check.StatusFail,
			}),
			wantMessage: map[string][]string{check.IDWebhookConfiguration: {
				"may not get ConfigMap kyma-system/kim-snatch-emergency-disable"}},
		},
		{
			// A marker left beside the MWC is a lesser thing than the MWC.
			name:  "marker_denied_beside_the_mwc_passes",
			react: deny("get", "configmaps", forbidden("configmaps")),
		},
		{
			name:   "marker_unreadable_without_mwc_fails",
			mutate: withoutMWC,
			react:  deny("get", "configmaps", apierrors.NewInternalError(errors.New("etcd is away"))),
			want: with(needMWC, map[string]check.Status{
				check.IDWebhookConfiguration: check.StatusFail, check.IDAdmission: check.StatusFail,
			}),
			wantMessage: map[string][]string{check.IDWebhookConfiguration: {
				"could not read ConfigMap kyma-system/kim-snatch-emergency-disable"}},
		},
	})
}

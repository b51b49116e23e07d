package check_test

import (
	"context"
	"regexp"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/kyma-project/kim-snatch/pkg/check"
	"github.com/kyma-project/kim-snatch/pkg/check/checktest"
)

const testNamespace = "kyma-system"

var allIDs = []string{check.IDWebhookPods, check.IDSyncerLease, check.IDCASecret, check.IDWebhookConfiguration, check.IDCABundle, check.IDWebhookEndpoints, check.IDServedCertificate, check.IDAdmission, check.IDKymaPool, check.IDPlacement}

// checklistCase is one run of the whole checklist against a fake cluster
// that holds a healthy install, changed as the case says.
//
// Access denied is one rule for every object: the item is not seen (SKIP)
// and the run is INCOMPLETE, never a PASS and never a FAIL of an
// installation the credentials cannot see.
type checklistCase struct {
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
}

// runChecklist runs check.Run for each case and holds its report to
// assertReport and the case's messages. assertReport holds every
// remediation to the rule; mustFail names the items some case must FAIL,
// so that their advice is rendered and so held to it.
func runChecklist(t *testing.T, now time.Time, mustFail []string, cases []checklistCase) {
	t.Helper()
	// failed collects the remediation of every FAIL the cases render.
	failed := map[string][]string{}
	for _, tt := range cases {
		t.Run(tt.name, func(t *testing.T) {
			report, ids := runChecklistCase(t, now, tt)
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
	t.Run("every_item_fails_in_some_case", func(t *testing.T) {
		for _, id := range mustFail {
			if len(failed[id]) == 0 {
				t.Errorf("no case makes %s FAIL, so its advice is not checked", id)
			}
		}
	})
}

// runChecklistCase loads the case's install into a fake clientset, runs
// the checklist and returns its report with the IDs it must hold, in order.
func runChecklistCase(t *testing.T, now time.Time, tt checklistCase) (check.Report, []string) {
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
	return report, ids
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

package e2e

import (
	"github.com/kyma-project/kim-snatch/test/framework"
	"strings"
	"testing"

	"github.com/kyma-project/kim-snatch/pkg/check"
)

// The in-cluster check, run as docs/operations.md runs it: a Job created
// from the CronJob kim-snatch-check, in a Pod of the cabundle-syncer image
// under the check's own read-only ServiceAccount, on the node. On a
// healthy installation it completes, and its log passes every item: from
// inside the cluster served-certificate dials the webhook Pods.
func TestInClusterCheckJobPasses(t *testing.T) {
	framework.InTier(t, framework.Full, "a second way to run the check; the smoke runs it once")
	framework.Shares(t)
	logs, completed := runCheckJob(t)
	if !completed {
		t.Fatalf("the check Job failed on a healthy installation:\n%s", logs)
	}
	for _, id := range checkIDs(true) {
		if !strings.Contains(logs, id) {
			t.Errorf("the Job's report lacks item %s", id)
		}
	}
	if !strings.Contains(logs, "Status: "+string(check.StatusPass)) {
		t.Errorf("the Job's report does not end with Status: PASS:\n%s", logs)
	}
}

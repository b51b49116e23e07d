package e2e

import (
	"fmt"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/kyma-project/kim-snatch/pkg/check"
	"github.com/kyma-project/kim-snatch/test/e2e/stack"
	"github.com/kyma-project/kim-snatch/test/framework"
)

// The in-cluster check, run as docs/operations.md runs it: a Job created
// from the CronJob kim-snatch-check, in a Pod of the cabundle-syncer image
// under the check's own read-only ServiceAccount, on the node. On a
// healthy installation it completes, and its log passes every item: from
// inside the cluster served-certificate dials the webhook Pods.
func TestInClusterCheckJobPasses(t *testing.T) {
	kubectl, err := framework.Kubectl()
	if err != nil {
		t.Fatal(err)
	}
	job := fmt.Sprintf("kim-snatch-check-e2e-%d", time.Now().Unix())
	run := func(args ...string) string {
		t.Helper()
		args = append([]string{"--kubeconfig", sys.KubeconfigPath(), "-n", stack.Namespace}, args...)
		out, err := exec.Command(kubectl, args...).CombinedOutput()
		if err != nil {
			t.Fatalf("kubectl %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		return string(out)
	}
	// docs/operations.md, "Run the check in the cluster".
	run("create", "job", "--from=cronjob/kim-snatch-check", job)
	t.Cleanup(func() {
		_ = exec.Command(kubectl, "--kubeconfig", sys.KubeconfigPath(), "-n", stack.Namespace, "delete", "job", job, "--wait=false").Run()
	})
	start := time.Now()
	run("wait", "--for=condition=complete", "--timeout=2m", "job/"+job)
	logs := run("logs", "job/"+job)
	logf("in-cluster check Job %s completed in %s:\n%s", job, time.Since(start).Round(time.Second), logs)
	for _, id := range checkIDs(true) {
		if !strings.Contains(logs, id) {
			t.Errorf("the Job's report lacks item %s", id)
		}
	}
	if !strings.Contains(logs, "Status: "+string(check.StatusPass)) {
		t.Errorf("the Job's report does not end with Status: PASS:\n%s", logs)
	}
}

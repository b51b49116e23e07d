package manifests

import (
	"slices"
	"strings"
	"testing"

	batchv1 "k8s.io/api/batch/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/util/diff"

	"github.com/kyma-project/kim-snatch/pkg/check"
)

// checkCronJob is the CronJob of deploy/syncer/check.yaml.
const checkCronJob = "kim-snatch-check"

// The shipped CronJob runs check with --fail-on=fail, once, and as a value
// check accepts: its Job then fails, and KimSnatchCheckJobFailed fires,
// only where a gate fails, never for a WARN alone (docs/operations.md,
// "Exit codes").
func TestCheckCronJobFailsItsJobOnlyWhereAGateFails(t *testing.T) {
	var cj batchv1.CronJob
	typed(t, find(t, render(t, syncerBase), "CronJob", checkCronJob), &cj)
	containers := cj.Spec.JobTemplate.Spec.Template.Spec.Containers
	if len(containers) != 1 {
		t.Fatalf("CronJob %s has %d containers, want 1", checkCronJob, len(containers))
	}
	args := containers[0].Args
	if len(args) == 0 || args[0] != "check" {
		t.Fatalf("CronJob %s runs %v, want cabundle-syncer check", checkCronJob, args)
	}
	var values []string
	for _, a := range args[1:] {
		if a == "--fail-on" || a == "-fail-on" {
			t.Fatalf("CronJob %s passes --fail-on's value as a separate argument; write --fail-on=fail", checkCronJob)
		}
		for _, prefix := range []string{"--fail-on=", "-fail-on="} {
			if v, ok := strings.CutPrefix(a, prefix); ok {
				values = append(values, v)
			}
		}
	}
	if !slices.Equal(values, []string{"fail"}) {
		t.Fatalf("CronJob %s sets --fail-on to %q, want exactly one fail", checkCronJob, values)
	}
	var f check.FailOn
	if err := f.UnmarshalText([]byte(values[0])); err != nil || f != check.FailOnFail {
		t.Fatalf("check reads --fail-on=%s as %q, %v; want %q", values[0], f, err, check.FailOnFail)
	}
	if b := cj.Spec.JobTemplate.Spec.BackoffLimit; b == nil || *b != 0 {
		t.Errorf("CronJob %s retries a failed run (backoffLimit %v): a Job's failure is its verdict, want 0", checkCronJob, b)
	}
}

// The release ships the CronJob suspended, and the patch of the example
// overlay, the one docs/operations.md ("Run the check on a schedule")
// shows, runs it on its schedule and changes nothing else of it: the same
// schedule, one run at a time, and the same Pod, under the check's own
// ServiceAccount and the restricted profile's settings.
func TestCheckCronJobShipsSuspendedAndTheExampleOverlayRunsIt(t *testing.T) {
	var shipped, example batchv1.CronJob
	typed(t, find(t, render(t, syncerBase), "CronJob", checkCronJob), &shipped)
	typed(t, find(t, renderExampleOverlay(t, ""), "CronJob", checkCronJob), &example)
	if s := shipped.Spec.Suspend; s == nil || !*s {
		t.Errorf("deploy/syncer ships CronJob %s running; it ships suspended", checkCronJob)
	}
	if s := example.Spec.Suspend; s == nil || *s {
		t.Errorf("%s leaves CronJob %s suspended; its patch runs it", exampleOverlay, checkCronJob)
	}
	if example.Spec.Schedule != shipped.Spec.Schedule || example.Spec.ConcurrencyPolicy != shipped.Spec.ConcurrencyPolicy {
		t.Errorf("%s runs CronJob %s on %q, %s; the release's %q, %s", exampleOverlay, checkCronJob,
			example.Spec.Schedule, example.Spec.ConcurrencyPolicy, shipped.Spec.Schedule, shipped.Spec.ConcurrencyPolicy)
	}
	want, got := shipped.Spec.JobTemplate.Spec.Template.Spec, example.Spec.JobTemplate.Spec.Template.Spec
	if len(got.Containers) != len(want.Containers) {
		t.Fatalf("%s: CronJob %s has %d containers, the release %d", exampleOverlay, checkCronJob, len(got.Containers), len(want.Containers))
	}
	for i := range got.Containers {
		got.Containers[i].Image = want.Containers[i].Image // the release pins the image
	}
	if !equality.Semantic.DeepEqual(got, want) {
		t.Errorf("%s changes the Pod of CronJob %s:\n%s", exampleOverlay, checkCronJob, diff.Diff(want, got))
	}
}

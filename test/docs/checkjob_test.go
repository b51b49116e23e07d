package docs

import (
	"regexp"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/kyma-project/kim-snatch/test/process"
)

// createCheckJob matches a command that creates a Job from the check's
// CronJob, and the Job's name.
var createCheckJob = regexp.MustCompile(`create job --from=cronjob/kim-snatch-check\s+(\S+)`)

// jobVariable matches a name given as a shell variable, quoted or not:
// "$job", $job, "${job}".
var jobVariable = regexp.MustCompile(`^"?\$\{?([A-Za-z_][A-Za-z0-9_]*)\}?"?$`)

// checkJobPrefix is how KimSnatchCheckJobFailed selects the check's Jobs
// (job_name=~"kim-snatch-check.*", deploy/syncer/prometheusrule.yaml): a
// Job named otherwise fails unseen.
const checkJobPrefix = "kim-snatch-check"

// Every documented run of the check Job names it by a shell variable that
// the same code block sets from the time, so that a second run never meets
// the first one's Job: Jobs stay for a day, and a fixed name makes create
// fail with AlreadyExists and logs print the old run's report. The
// assignment, run by sh as written, gives a Job name that the API server
// accepts and the alert selects; no line of the block names a fixed Job of
// the check instead. Inline code cannot set a variable, so it creates no
// check Job.
func TestDocumentedCheckJobsRunUnderANameOfTheirOwn(t *testing.T) {
	runs := 0
	for _, d := range installDocuments(t) {
		for _, span := range inlineSpans(d.text) {
			if createCheckJob.MatchString(span) {
				t.Errorf("%s: %q creates a check Job in inline code, where no name of its own can be set; use a code block", d.path, span)
			}
		}
		for _, block := range codeBlockTexts(d.text) {
			for _, m := range createCheckJob.FindAllStringSubmatch(block, -1) {
				runs++
				v := jobVariable.FindStringSubmatch(m[1])
				if v == nil {
					t.Errorf("%s: %q names the check Job %s; name it by a variable set from the time", d.path, m[0], m[1])
					continue
				}
				name := assignedName(t, d.path, block, v[1])
				if name == "" {
					continue
				}
				if errs := validation.IsDNS1123Label(name); len(errs) > 0 {
					t.Errorf("%s: the check Job's name %q is no Job name the API server accepts: %v", d.path, name, errs)
				}
				if !strings.HasPrefix(name, checkJobPrefix) {
					t.Errorf("%s: the check Job's name %q does not start with %s, so KimSnatchCheckJobFailed never sees it", d.path, name, checkJobPrefix)
				}
			}
			for _, fixed := range fixedCheckJob.FindAllString(block, -1) {
				t.Errorf("%s: a code block that runs the check names the fixed Job %s", d.path, fixed)
			}
		}
	}
	if runs == 0 {
		t.Fatal("no document runs the check Job")
	}
}

// fixedCheckJob matches a check Job named literally in a command, such as
// job/kim-snatch-check-now; the CronJob's own name is cronjob/kim-snatch-check.
var fixedCheckJob = regexp.MustCompile(`\bjob[/ ]kim-snatch-check-[a-z0-9-]+`)

// assignedName runs the line of block that assigns variable with sh, as
// written, and returns the name it sets; it reports a missing or failing
// assignment, or one that does not take the time, and returns "".
func assignedName(t *testing.T, path, block, variable string) string {
	t.Helper()
	var line string
	for l := range strings.SplitSeq(block, "\n") {
		if l = strings.TrimSpace(l); strings.HasPrefix(l, variable+"=") {
			line = l
			break
		}
	}
	if line == "" {
		t.Errorf("%s: the code block that creates the check Job as $%s does not set %s", path, variable, variable)
		return ""
	}
	if !strings.Contains(line, "$(date ") {
		t.Errorf("%s: %q does not take the time: a second run would meet the first one's Job", path, line)
		return ""
	}
	r, err := process.Command{}.Run(t.Context(), "sh", "-c", line+`; printf %s "$`+variable+`"`)
	if err != nil {
		t.Errorf("%s: %v", path, err)
		return ""
	}
	return r.Stdout
}

// codeBlockTexts returns each fenced code block of text as one string.
func codeBlockTexts(text string) []string {
	var out []string
	var cur []string
	in := false
	for l := range strings.SplitSeq(text, "\n") {
		if strings.HasPrefix(strings.TrimSpace(l), "```") {
			if in {
				out = append(out, strings.Join(cur, "\n"))
				cur = nil
			}
			in = !in
			continue
		}
		if in {
			cur = append(cur, l)
		}
	}
	return out
}

package check

import (
	"fmt"
	"strings"

	"github.com/kyma-project/kim-snatch/pkg/cmdline"
)

// The exit codes of `cabundle-syncer check`, the one place they are
// defined; ExitCodes says what each means, and docs/operations.md ("Exit
// codes") names them for operators. ExitIncomplete came after
// ExitCannotRun, so it has the next free number, not one in the order of
// the statuses. ExitUsage is every command line mistake of the binary,
// the root command's included, so that a mistyped subcommand never reads
// as a verdict.
const (
	ExitPass       = 0
	ExitWarn       = 1
	ExitFail       = 2
	ExitCannotRun  = 3
	ExitIncomplete = 4
	ExitUsage      = cmdline.ExitUsage
)

// ExitCode is one exit code of check and what it tells an operator and a gate.
type ExitCode struct {
	Code int
	// Name is the report's status for the codes that carry one, else a
	// short name.
	Name string
	// Meaning is one sentence for the usage text and the docs.
	Meaning string
	// PassesGate says whether a gate such as "after any change, check must
	// pass" (docs/releasing.md) accepts the code: every item was seen and
	// none failed, so the installation admits Kyma Pods with the term. A
	// WARN passes: its items need a follow-up that a change of the
	// installation neither causes nor fixes at once, such as Pods created
	// before it was installed, or a pool that is full.
	PassesGate bool
}

// ExitCodes returns every exit code of check, in order.
func ExitCodes() []ExitCode {
	return []ExitCode{
		{Code: ExitPass, Name: string(StatusPass), Meaning: "every item passed", PassesGate: true},
		{Code: ExitWarn, Name: string(StatusWarn), PassesGate: true,
			Meaning: "every item was seen, none failed, at least one warned: follow its remediation"},
		{Code: ExitFail, Name: string(StatusFail), Meaning: "at least one item failed"},
		{Code: ExitCannotRun, Name: "could not run", Meaning: "no item ran: the kubeconfig is unusable, " +
			"the API server cannot be reached or refuses the credentials, or the report could not be written"},
		{Code: ExitIncomplete, Name: string(StatusIncomplete), Meaning: "no item failed, but at least one was skipped " +
			"(access denied, or it needs an item that could not be judged), so the run did not see everything"},
		{Code: ExitUsage, Name: "usage error",
			Meaning: "a mistake on the command line: an unknown command or flag, or a bad value; nothing ran"},
	}
}

// ExitCodesSummary lists the codes on one line, as "0 PASS, 1 WARN, ...",
// for the root command's list of subcommands.
func ExitCodesSummary() string {
	var parts []string
	for _, e := range ExitCodes() {
		parts = append(parts, fmt.Sprintf("%d %s", e.Code, e.Name))
	}
	return strings.Join(parts, ", ")
}

// ExitCodesHelp lists each code with its meaning and whether a gate
// accepts it, for check's usage text.
func ExitCodesHelp() string {
	var b strings.Builder
	for _, e := range ExitCodes() {
		gate := "fails a gate"
		if e.PassesGate {
			gate = "passes a gate"
		}
		fmt.Fprintf(&b, "  %-3d %s: %s (%s).\n", e.Code, e.Name, e.Meaning, gate)
	}
	return b.String()
}

// FailOn is check's verdict threshold, the flag --fail-on: the lowest
// report status that exits non-zero. A FAIL, an INCOMPLETE run, a run that
// could not start and a usage error exit non-zero at either threshold; a
// gate never accepts them (docs/operations.md, "Exit codes").
type FailOn string

const (
	// FailOnWarn exits with the report's own code, 1 for a WARN: every
	// code of ExitCodes can occur. The default, so that the documented
	// codes hold for every command line that does not name the flag.
	FailOnWarn FailOn = "warn"
	// FailOnFail exits 0 for a WARN, for a runner that knows only success
	// and failure, such as the CronJob's Job: its failure raises
	// KimSnatchCheckJobFailed, and a WARN (placement, a full pool) is a
	// follow-up that passes a gate, not a reason to alert.
	FailOnFail FailOn = "fail"
)

// FailOnValues lists the values of --fail-on, the default first.
func FailOnValues() []FailOn { return []FailOn{FailOnWarn, FailOnFail} }

// UnmarshalText accepts exactly the values of FailOnValues.
func (f *FailOn) UnmarshalText(text []byte) error {
	for _, v := range FailOnValues() {
		if string(text) == string(v) {
			*f = v
			return nil
		}
	}
	return fmt.Errorf("want %s or %s", FailOnWarn, FailOnFail)
}

// MarshalText returns the flag's value as the command line writes it.
func (f FailOn) MarshalText() ([]byte, error) { return []byte(f), nil }

// ExitCode maps the report's status to the command's exit code.
func (r Report) ExitCode() int {
	switch r.Status {
	case StatusPass:
		return ExitPass
	case StatusWarn:
		return ExitWarn
	case StatusIncomplete:
		return ExitIncomplete
	}
	return ExitFail
}

// ExitCodeAt is ExitCode under the threshold failOn: at FailOnFail a WARN
// exits ExitPass, and every other code is ExitCode's.
func (r Report) ExitCodeAt(failOn FailOn) int {
	code := r.ExitCode()
	if failOn == FailOnFail && code == ExitWarn {
		return ExitPass
	}
	return code
}

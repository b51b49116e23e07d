// Package cmdlinetest holds the assertion that the option tests of both
// commands and of pkg/syncer share: a validation reports every problem at
// once, each under the flag it concerns; the table those tests run it on,
// one change to valid options a row; and the check of what a command line
// did, which the command-line tests of both commands share.
//
// It is imported by tests only.
package cmdlinetest

import (
	"strings"
	"testing"
)

// MentionsEach fails t unless err is nil where wants is empty, and
// otherwise unless err's message contains each of wants.
func MentionsEach(t testing.TB, err error, wants []string) {
	t.Helper()
	if len(wants) == 0 {
		if err != nil {
			t.Fatalf("error %v, want none", err)
		}
		return
	}
	if err == nil {
		t.Fatalf("no error, want one that mentions each of %q", wants)
	}
	for _, w := range wants {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("error %v\nwant it to mention %q", err, w)
		}
	}
}

// Change is one row of an options table: a change to valid options, and
// what the error of their validation must mention; nothing where the
// changed options are valid.
type Change[O any] struct {
	Name    string
	Mutate  func(*O)
	WantErr []string
}

// EachChange runs each change as a subtest: the options valid returns,
// changed by Mutate, must give from validate an error that MentionsEach of
// WantErr.
func EachChange[O any](t *testing.T, valid func() O, validate func(O) error, changes []Change[O]) {
	t.Helper()
	for _, c := range changes {
		t.Run(c.Name, func(t *testing.T) {
			o := valid()
			c.Mutate(&o)
			MentionsEach(t, validate(o), c.WantErr)
		})
	}
}

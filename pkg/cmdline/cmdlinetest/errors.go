// Package cmdlinetest holds the assertion that the option tests of both
// commands and of pkg/syncer share: a validation reports every problem at
// once, each under the flag it concerns.
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

package version

import (
	"strings"
	"testing"
)

func TestString(t *testing.T) {
	got := String("snatch-webhook")
	if !strings.HasPrefix(got, "snatch-webhook "+version+" (go") {
		t.Fatalf("String() = %q, want it to start with the binary name, version and Go version", got)
	}
}

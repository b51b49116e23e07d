package version

import (
	"fmt"
	"runtime"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
)

func TestStringNamesTheBinaryVersionGoAndRevision(t *testing.T) {
	got := String("snatch-webhook")
	if !strings.HasPrefix(got, "snatch-webhook "+version+" (go") {
		t.Fatalf("String() = %q, want it to start with the binary name, version and Go version", got)
	}
	if !strings.HasSuffix(got, ", revision "+revision+")") {
		t.Errorf("String() = %q, want it to end with the revision %s", got, revision)
	}
}

func TestRegisterBuildInfoExportsTheLabelsOfString(t *testing.T) {
	reg := prometheus.NewRegistry()
	if err := RegisterBuildInfo(reg, "tool_build_info", "tool"); err != nil {
		t.Fatal(err)
	}
	want := fmt.Sprintf(`# HELP tool_build_info The version, revision and Go version tool was built with; always 1.
# TYPE tool_build_info gauge
tool_build_info{goversion=%q,revision=%q,version=%q} 1
`, runtime.Version(), revision, version)
	if err := testutil.GatherAndCompare(reg, strings.NewReader(want)); err != nil {
		t.Error(err)
	}
	if err := RegisterBuildInfo(reg, "tool_build_info", "tool"); err == nil {
		t.Error("a second registration of the same gauge succeeded")
	}
}

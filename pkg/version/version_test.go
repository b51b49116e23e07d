package version

import (
	"maps"
	"runtime"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
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
	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	if len(families) != 1 || families[0].GetName() != "tool_build_info" || len(families[0].GetMetric()) != 1 {
		t.Fatalf("gathered %v, want the one series of tool_build_info", families)
	}
	m := families[0].GetMetric()[0]
	got := map[string]string{}
	for _, l := range m.GetLabel() {
		got[l.GetName()] = l.GetValue()
	}
	want := map[string]string{"version": version, "revision": revision, "goversion": runtime.Version()}
	if !maps.Equal(got, want) || m.GetGauge().GetValue() != 1 {
		t.Errorf("tool_build_info%v = %v, want %v = 1", got, m.GetGauge().GetValue(), want)
	}
	if err := RegisterBuildInfo(reg, "tool_build_info", "tool"); err == nil {
		t.Error("a second registration of the same gauge succeeded")
	}
}

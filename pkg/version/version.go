// Package version holds the version and revision that the build stamps with
// the linker's -X (hack/build/build-binary.sh); RegisterBuildInfo exports them.
package version

import (
	"fmt"
	"runtime"

	"github.com/prometheus/client_golang/prometheus"
)

// Vars, as the linker's -X stamps nothing else.
var (
	version  = "dev"     // the release the binary was built as
	revision = "unknown" // the commit the binary was built from
)

// String describes the binary for --version output and the startup log
// line. The revision comes last, so that what reads the binary name and
// version as the first two words, or the Go version after "(", still does.
func String(binary string) string {
	return fmt.Sprintf("%s %s (%s, %s/%s, revision %s)", binary, version, runtime.Version(), runtime.GOOS, runtime.GOARCH, revision)
}

// RegisterBuildInfo registers the gauge name{version, revision, goversion}
// = 1 on reg, the labels those of String. A fleet's version records read it
// (deploy/components/fleet), so a rollout shows as two series.
func RegisterBuildInfo(reg prometheus.Registerer, name, binary string) error {
	g := prometheus.NewGauge(prometheus.GaugeOpts{
		Name:        name,
		Help:        "The version, revision and Go version " + binary + " was built with; always 1.",
		ConstLabels: prometheus.Labels{"version": version, "revision": revision, "goversion": runtime.Version()},
	})
	g.Set(1)
	if err := reg.Register(g); err != nil {
		return fmt.Errorf("register the build-info metric: %w", err)
	}
	return nil
}

// Package version holds the version of the binary it is linked into. Each
// build stamps its own, so the two binaries carry independent versions:
//
//	go build -ldflags "-X github.com/kyma-project/kim-snatch/pkg/version.version=v1.2.3" ./cmd/snatch-webhook
package version

import (
	"fmt"
	"runtime"
)

// version is a var only because the linker's -X can stamp nothing else.
var version = "dev"

// String describes the binary for --version output and the startup log line.
func String(binary string) string {
	return fmt.Sprintf("%s %s (%s, %s/%s)", binary, version, runtime.Version(), runtime.GOOS, runtime.GOARCH)
}

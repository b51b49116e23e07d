package version

import (
	"fmt"
	"runtime"
)

// version is set at link time with -ldflags -X; it is a var only because the
// linker can stamp nothing else. Nothing in the program writes it.
var version = "dev"

// Version returns the version stamped into this binary, or "dev".
func Version() string { return version }

// String describes the binary for --version output and the startup log line.
func String(binary string) string {
	return fmt.Sprintf("%s %s (%s, %s/%s)", binary, version, runtime.Version(), runtime.GOOS, runtime.GOARCH)
}

// Command node-clean removes what a real node of package realnode left on
// the host, also after a killed run, and says what still differs from the
// host as the node found it. It exits 1 if anything does.
//
//	go run ./test/realnode/cmd/node-clean [-state-dir DIR]
package main

import (
	"flag"
	"fmt"
	"os"

	"github.com/kyma-project/kim-snatch/test/framework"
	"github.com/kyma-project/kim-snatch/test/realnode"
)

func main() {
	dir := flag.String("state-dir", realnode.DefaultStateDir, "the node's state folder")
	flag.Parse()
	bin, err := framework.BinDir()
	diff := ""
	if err == nil {
		diff, err = realnode.Clean(*dir, bin)
	}
	if err != nil || diff != "" {
		fmt.Fprintf(os.Stderr, "node-clean: %v\n%s", err, diff)
		os.Exit(1)
	}
}

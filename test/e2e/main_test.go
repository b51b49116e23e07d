package e2e

import (
	"context"
	"flag"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/kyma-project/kim-snatch/test/framework"
	"github.com/kyma-project/kim-snatch/test/realnode"
)

// sys is the installation under test, shared by every test in the suite.
// A test that breaks it runs alone (framework.Alone) and leaves it as it
// found it; the others run beside each other (framework.Shares), each in
// namespaces of its own.
var sys system

func TestMain(m *testing.M) {
	flag.Parse()
	if testing.Short() {
		fmt.Println("e2e: skipped with -short")
		os.Exit(0)
	}
	if os.Getenv(framework.KubeconfigEnv) == "" {
		if err := realnode.CheckPrerequisites(); err != nil {
			fmt.Fprintf(os.Stderr, "e2e: %v\n", err)
			if os.Getenv("CI") == "true" {
				os.Exit(1)
			}
			fmt.Println("e2e: skipped: no real node here")
			os.Exit(0)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Minute)
	var err error
	sys, err = newSystem(ctx)
	cancel()
	if err != nil {
		fmt.Fprintf(os.Stderr, "e2e: set up the installation: %v\n", err)
		os.Exit(1)
	}
	code := m.Run()
	if err := sys.Stop(); err != nil {
		fmt.Fprintf(os.Stderr, "e2e: stop the installation: %v\n", err)
		code = 1
	}
	os.Exit(code)
}

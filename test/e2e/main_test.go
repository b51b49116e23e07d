package e2e

import (
	"context"
	"flag"
	"fmt"
	"os"
	"testing"
	"time"
)

// sys is the installation under test, shared by every test in the suite;
// the tests run one after another and each leaves it as it found it.
var sys system

func TestMain(m *testing.M) {
	flag.Parse()
	if testing.Short() {
		fmt.Println("e2e: skipped with -short")
		os.Exit(0)
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
	sys.Stop()
	os.Exit(code)
}

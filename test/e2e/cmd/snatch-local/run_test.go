package main

import (
	"context"
	"errors"
	"os"
	"strings"
	"syscall"
	"testing"

	"github.com/kyma-project/kim-snatch/test/framework"
	"github.com/kyma-project/kim-snatch/test/realnode"
)

// TestStartAndClose runs what `make run` runs up to the wait for a signal,
// on the real node, and then its teardown.
func TestStartAndClose(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a control plane, a node and both binaries; skipped with -short")
	}
	if err := realnode.CheckPrerequisites(); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal(err)
		}
		t.Skip(err)
	}
	// No deadline: start may wait for another node on this host to stop;
	// go test's -timeout bounds the whole.
	ctx := context.Background()
	var out strings.Builder
	sess, err := start(ctx, Options{KymaReplicas: 3, CustomerReplicas: 2}, &out)
	if err != nil {
		t.Fatalf("start: %v\noutput:\n%s", err, out.String())
	}
	closed := false
	defer func() {
		if !closed {
			_ = sess.close()
		}
	}()

	perNamespace := map[string]int{}
	for _, r := range sess.rows {
		perNamespace[r.Namespace]++
		switch r.Namespace {
		case kymaNamespace:
			if !r.Term || r.Pool != framework.KymaPool {
				t.Errorf("Kyma Pod %+v: want the term and pool %s", r, framework.KymaPool)
			}
		case customerNamespace:
			if r.Term || r.Node == "" {
				t.Errorf("customer Pod %+v: want no term and a Node", r)
			}
		default:
			t.Errorf("row of an unexpected namespace: %+v", r)
		}
	}
	if perNamespace[kymaNamespace] != 3 || perNamespace[customerNamespace] != 2 {
		t.Errorf("Pods per namespace %v, want 3 in %s and 2 in %s", perNamespace, kymaNamespace, customerNamespace)
	}
	for _, want := range []string{"POD   ", "As expected:", "export KUBECONFIG=" + sess.cluster.KubeconfigPath} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, out.String())
		}
	}
	t.Logf("output:\n%s", out.String())

	pids := sess.cluster.PIDs()
	closed = true
	if err := sess.close(); err != nil {
		t.Fatalf("close: %v", err)
	}
	for _, pid := range pids {
		if err := syscall.Kill(pid, 0); !errors.Is(err, syscall.ESRCH) {
			t.Errorf("control plane process %d still exists after close (kill -0: %v)", pid, err)
		}
	}
}

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

// TestRunShowsTheTermOnKymaPodsOnlyAndCloseStopsTheControlPlane runs what
// `make run` runs up to the wait for a signal, on the real node, and then
// its teardown.
func TestRunShowsTheTermOnKymaPodsOnlyAndCloseStopsTheControlPlane(t *testing.T) {
	framework.InTier(t, framework.Smoke, "make run's path, once")
	framework.Alone(t, "it starts make run's control plane, whose ports and processes are the machine's")
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

	checkRows(t, sess.rows)
	checkOutput(t, out.String(), sess.cluster.KubeconfigPath)

	pids := sess.cluster.PIDs()
	closed = true
	if err := sess.close(); err != nil {
		t.Fatalf("close: %v", err)
	}
	checkProcessesGone(t, pids)
}

// checkRows checks that the 3 Kyma Pods carry the term and run in the Kyma
// pool, and that the 2 customer Pods carry no term and are bound.
func checkRows(t *testing.T, rows []Row) {
	t.Helper()
	perNamespace := map[string]int{}
	for _, r := range rows {
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
}

// checkOutput checks that the output has the table, the summary and the
// kubeconfig to export.
func checkOutput(t *testing.T, out, kubeconfig string) {
	t.Helper()
	for _, want := range []string{"POD   ", "As expected:", "export KUBECONFIG=" + kubeconfig} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	t.Logf("output:\n%s", out)
}

// checkProcessesGone checks that none of the control plane's processes exists.
func checkProcessesGone(t *testing.T, pids []int) {
	t.Helper()
	for _, pid := range pids {
		if err := syscall.Kill(pid, 0); !errors.Is(err, syscall.ESRCH) {
			t.Errorf("control plane process %d still exists after close (kill -0: %v)", pid, err)
		}
	}
}

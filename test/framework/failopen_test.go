package framework

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
)

func TestFailOpenCallsReadsEveryAPIServerLogUpToTheLimit(t *testing.T) {
	dir := t.TempDir()
	// Lines as kube-apiserver's mutating dispatcher writes them, in the log
	// of the first start and of a restart, beside the log of another
	// component that must not be read.
	first := "W1207 11:15:31.1 1 dispatcher.go:210] Failed calling webhook, failing open pods.a: failed calling webhook \"pods.a\": Post \"https://a.svc:443/mutate-pod?timeout=10s\": EOF\n"
	second := "W1207 11:15:32.2 1 dispatcher.go:210] Failed calling webhook, failing open pods.b: failed calling webhook \"pods.b\": context deadline exceeded\n"
	files := map[string]string{
		APIServer + ".log":   "I1207 11:15:30.0 1 flags.go:64] FLAG: --v=\"2\"\n" + first,
		APIServer + ".1.log": second + second,
		Etcd + ".log":        "failing open is not an etcd line\n",
	}
	for name, body := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	c := &Cluster{Dir: dir}

	got, err := c.FailOpenCalls(10)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{second[:len(second)-1], second[:len(second)-1], first[:len(first)-1]}
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Errorf("FailOpenCalls(10) = %q, want %q", got, want)
	}
	if got, _ := c.FailOpenCalls(2); len(got) != 2 {
		t.Errorf("FailOpenCalls(2) returned %d lines, want 2", len(got))
	}
	if got, err := (&Cluster{}).FailOpenCalls(10); err != nil || got != nil {
		t.Errorf("an existing cluster's FailOpenCalls = %q, %v; want none and no error", got, err)
	}
}

package main

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// kubectl's flags select the cluster check asks, and the report names it:
// a kubeconfig whose current context points at a loopback port where
// nothing listens, beside a context of a real API server.
func TestCheckAsksTheClusterKubectlsFlagsSelect(t *testing.T) {
	c := newCluster(t)
	kc, err := clientcmd.LoadFromFile(c.KubeconfigPath)
	if err != nil {
		t.Fatal(err)
	}
	real := kc.Contexts[kc.CurrentContext]
	server := kc.Clusters[real.Cluster].Server
	two := clientcmdapi.NewConfig()
	two.Clusters["real"], two.AuthInfos["admin"] = kc.Clusters[real.Cluster], kc.AuthInfos[real.AuthInfo]
	two.Clusters["nowhere"] = &clientcmdapi.Cluster{Server: fmt.Sprintf("https://127.0.0.1:%d", freePort(t)), InsecureSkipTLSVerify: true}
	two.AuthInfos["nobody"] = &clientcmdapi.AuthInfo{Token: "t"}
	two.Contexts["test-real"] = &clientcmdapi.Context{Cluster: "real", AuthInfo: "admin"}
	two.Contexts["test-nowhere"] = &clientcmdapi.Context{Cluster: "nowhere", AuthInfo: "nobody"}
	two.CurrentContext = "test-nowhere"
	path := filepath.Join(t.TempDir(), "kubeconfig")
	if err := clientcmd.WriteToFile(*two, path); err != nil {
		t.Fatal(err)
	}

	tests := []struct {
		name        string
		args        []string
		wantContext string
	}{
		{name: "context_flag_selects_its_context", args: []string{"--context=test-real"}, wantContext: "test-real"},
		{name: "cluster_and_user_override_the_current_context", args: []string{"--cluster=real", "--user=admin"}, wantContext: "test-nowhere"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			// Nothing of the installation exists there: the checks ran and
			// failed (2), where the unreachable context cannot run (3).
			code, stdout, stderr := runCheckBinary(t, append([]string{"--kubeconfig=" + path, "--timeout=20s", "--target-namespace=default", "-o", "json"}, tt.args...)...)
			if code != 2 {
				t.Fatalf("exit code %d, want 2\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
			}
			r := decodeReport(t, stdout)
			if r.Cluster.Context != tt.wantContext || r.Cluster.Server != server {
				t.Errorf("report names context %q at %q, want %q at %q", r.Cluster.Context, r.Cluster.Server, tt.wantContext, server)
			}
			code, table, _ := runCheckBinary(t, append([]string{"--kubeconfig=" + path, "--timeout=20s"}, tt.args...)...)
			if want := fmt.Sprintf("Cluster: context %s, API server %s\n", tt.wantContext, server); code != 2 || !strings.Contains(table, want) {
				t.Errorf("table: exit code %d, want 2 and a line %q:\n%s", code, want, table)
			}
		})
	}

	// Without the flags the current context, where nothing listens, is asked.
	code, stdout, stderr := runCheckBinary(t, "--kubeconfig="+path, "--timeout=5s")
	if code != 3 || stdout != "" || !strings.Contains(stderr, "of context test-nowhere") {
		t.Errorf("current context: exit code %d, stdout %q, stderr %q; want 3, nothing, and the context named", code, stdout, stderr)
	}
	// A context the kubeconfig does not hold cannot run.
	if code, _, stderr := runCheckBinary(t, "--kubeconfig="+path, "--context=test-other"); code != 3 || !strings.Contains(stderr, "test-other") {
		t.Errorf("unknown context: exit code %d, stderr %q; want 3 and the context named", code, stderr)
	}
}

package main

import (
	"os"
	"path/filepath"
	"testing"
)

func TestRestConfigSetsTheClientRateLimit(t *testing.T) {
	kubeconfig := filepath.Join(t.TempDir(), "kubeconfig")
	const data = `apiVersion: v1
kind: Config
clusters: [{name: c, cluster: {server: "https://127.0.0.1:6443"}}]
users: [{name: u, user: {token: t}}]
contexts: [{name: c, context: {cluster: c, user: u}}]
current-context: c
`
	if err := os.WriteFile(kubeconfig, []byte(data), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg, err := restConfig(kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Host != "https://127.0.0.1:6443" {
		t.Errorf("host %q, want the kubeconfig's", cfg.Host)
	}
	if cfg.QPS != 20 || cfg.Burst != 30 {
		t.Errorf("QPS %v burst %d, want controller-runtime's 20 and 30 rather than client-go's 5 and 10", cfg.QPS, cfg.Burst)
	}
}

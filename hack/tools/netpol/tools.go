//go:build tools

// Package tools records the command built from this module, so that
// `go mod tidy` keeps its dependencies:
//
//	go build -o kube-network-policies sigs.k8s.io/kube-network-policies/cmd
package tools

import _ "sigs.k8s.io/kube-network-policies/cmd"

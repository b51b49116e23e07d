//go:build tools

// Package tools records the command built from this module, so that
// `go mod tidy` keeps its dependencies:
//
//	go build -o cert-controller-manager github.com/gardener/cert-management/cmd/cert-controller-manager
package tools

import _ "github.com/gardener/cert-management/cmd/cert-controller-manager"

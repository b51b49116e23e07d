//go:build tools

// Package tools records the command built from this module, so that
// `go mod tidy` keeps its dependencies:
//
//	go build -o coredns github.com/coredns/coredns
package tools

import _ "github.com/coredns/coredns"

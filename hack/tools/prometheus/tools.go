//go:build tools

// Package tools records the command built from this module, so that
// `go mod tidy` keeps its dependencies:
//
//	go build -o prometheus github.com/prometheus/prometheus/cmd/prometheus
package tools

import _ "github.com/prometheus/prometheus/cmd/prometheus"

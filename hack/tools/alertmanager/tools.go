//go:build tools

// Package tools records the command built from this module, so that
// `go mod tidy` keeps its dependencies:
//
//	go build -o alertmanager github.com/prometheus/alertmanager/cmd/alertmanager
package tools

import _ "github.com/prometheus/alertmanager/cmd/alertmanager"

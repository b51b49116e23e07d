//go:build tools

// Package tools records golangci-lint so that `go mod tidy` keeps its
// dependencies.
package tools

import _ "github.com/golangci/golangci-lint/v2/cmd/golangci-lint"

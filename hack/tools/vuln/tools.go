//go:build tools

// Package tools records govulncheck so that `go mod tidy` keeps its
// dependencies.
package tools

import _ "golang.org/x/vuln/cmd/govulncheck"

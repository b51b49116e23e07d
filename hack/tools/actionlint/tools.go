//go:build tools

// Package tools records actionlint so that `go mod tidy` keeps its
// dependencies.
package tools

import _ "github.com/rhysd/actionlint/cmd/actionlint"

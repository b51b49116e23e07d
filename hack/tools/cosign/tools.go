//go:build tools

// Package tools records cosign so that `go mod tidy` keeps its dependencies.
package tools

import _ "github.com/sigstore/cosign/v2/cmd/cosign"

//go:build tools

// Package tools records cyclonedx-gomod so that `go mod tidy` keeps its
// dependencies.
package tools

import _ "github.com/CycloneDX/cyclonedx-gomod/cmd/cyclonedx-gomod"

//go:build tools

// Package tools records the commands built from this module, so that
// `go mod tidy` keeps their dependencies:
//
//	go build -o toxiproxy-server github.com/Shopify/toxiproxy/v2/cmd/server
//	go build -o toxiproxy-cli github.com/Shopify/toxiproxy/v2/cmd/cli
package tools

import (
	_ "github.com/Shopify/toxiproxy/v2/cmd/cli"
	_ "github.com/Shopify/toxiproxy/v2/cmd/server"
)

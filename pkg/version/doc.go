// Package version holds the version of the binary it is linked into.
//
// Both binaries link this package, and each build stamps its own value, so
// snatch-webhook and cabundle-syncer carry independent versions:
//
//	go build -ldflags "-X github.com/kyma-project/kim-snatch/pkg/version.version=v1.2.3" ./cmd/snatch-webhook
package version

// Package supplychain gives the tests of test/manifests and test/docs what a
// signed release needs: cosign (tools.Cosign) run offline, a throwaway
// signing key, and an image registry on loopback.
//
// The registry is go-containerregistry's in-memory registry
// (pkg/registry), served in the test process: releases sign their image by
// digest in a registry, and cosign stores the signature there.
package supplychain

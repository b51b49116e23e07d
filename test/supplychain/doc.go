// Package supplychain gives the tests of test/manifests and test/docs what a
// signed release needs: cosign (tools.Cosign) run offline, a throwaway
// signing key, and go-containerregistry's in-memory registry served on
// loopback, where releases sign their image by digest and cosign stores the
// signature.
package supplychain

// Package kimsnatch stands in for the old single-binary kim-snatch, which
// KIM Snatch replaces (docs/migration.md), in tests that cannot run its
// image. It is built from the old kim-snatch's documented behaviour and
// manifests, not from its code, and does what that binary did (KimSnatch
// tells what that is): it gives every Pod the Kyma pool's term, or the
// pool annotation where the pool has no Nodes, and force-applies ca.crt as
// every caBundle on each certificate load.
//
// Inventory returns the old installation's objects, as the manifest of a
// release up to 1.0.9 renders them, with the CustomResourceDefinitions of
// config/crd. The command cmd/kim-snatch runs the stand-in in a container,
// as the old image ran /manager; `make images` packs it.
package kimsnatch

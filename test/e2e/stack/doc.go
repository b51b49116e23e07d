// Package stack names the installation of deploy/ in a cluster, and holds
// what the end-to-end suite, the migration scenario and `make run` need to
// reach it: the names deploy/ gives its objects, the issuer that stands in
// for Gardener cert-management, waits for the caBundle, the API server's
// fail-open count, and deploy/'s manifests as kustomize renders them.
package stack

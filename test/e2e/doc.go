// Package e2e is the end-to-end suite: both binaries, as real processes or
// real Pods, on a cluster with a Kyma worker pool and a customer pool.
//
// By default it runs on the local stack (package stack): a control plane
// built from Go modules, with no container engine. With
// SNATCH_TEST_KUBECONFIG set it runs against an existing cluster where
// deploy/ is installed, such as the kind cluster of `make e2e-kind`.
package e2e

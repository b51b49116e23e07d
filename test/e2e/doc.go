// Package e2e is the end-to-end suite: the shipped images from the shipped
// manifests, on a cluster with a Kyma worker pool and a customer pool.
//
// By default it starts the real node of package realnode beside a local
// control plane, with kubelet-less Nodes in both pools for the load, and
// installs deploy/ through test/e2e/overlay with kubectl. With
// SNATCH_TEST_KUBECONFIG set it runs against an existing cluster where the
// same overlay is installed, such as the kind cluster of `make e2e-kind`.
package e2e

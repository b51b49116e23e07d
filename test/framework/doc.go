// Package framework starts a real Kubernetes control plane for tests and for
// `make run`, from the binaries `make tools` builds into bin/k8s-<version>,
// without a container engine: envtest's etcd and kube-apiserver, with a
// client in system:masters, and on request kube-scheduler and
// kube-controller-manager (Options); Nodes without a kubelet (CreateNodes);
// ports below the ephemeral range (FreePorts); and faults (Kill, Revive).
// Every process it starts dies with the process that started it (see wrap).
//
// Set SNATCH_TEST_KUBECONFIG to run the same tests against an existing
// cluster (kind, for example): nothing is started then.
package framework

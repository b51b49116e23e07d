// Package framework starts a real Kubernetes control plane for tests and for
// `make run`, from the binaries `make tools` builds into bin/k8s-<version>;
// nothing here needs a container engine.
//
// controller-runtime's envtest starts etcd and kube-apiserver and gives
// Config a client certificate in system:masters. The framework adds
// kube-scheduler and kube-controller-manager on request (Options), Nodes
// without a kubelet (CreateNodes), the kube-apiserver flags the tests need
// (setAPIServerFlags) and a wait for /readyz, ports below the ephemeral
// range (FreePorts), and faults (Kill, Revive). Every process it starts dies
// with the process that started it (see wrap), so a killed test leaves none
// behind. Stop shuts the components down in reverse order.
//
// Set Options.Kubeconfig or SNATCH_TEST_KUBECONFIG to run the same tests
// against an existing cluster (kind, for example): nothing is started then.
package framework

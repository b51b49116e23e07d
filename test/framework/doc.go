// Package framework starts a real Kubernetes control plane for tests and for
// `make run`, from the binaries that `make tools` builds from Go modules into
// bin/k8s-<version> (see hack/tools). There is no container engine on the
// machines this project is developed and tested on, so nothing here needs
// one.
//
// controller-runtime's envtest starts etcd and kube-apiserver, in every
// case: it picks their default flags, writes the serving certificate, a
// client CA and the ServiceAccount signing key, and waits for /healthz. Its
// AddUser gives Config and KubeconfigPath a client certificate in
// system:masters; kube-scheduler, kube-controller-manager, kubectl and the
// processes under test use that kubeconfig.
//
// The framework adds what envtest lacks:
//
//   - kube-scheduler and kube-controller-manager, on request (Options), the
//     latter signing with envtest's ServiceAccount key;
//   - Nodes without a kubelet (CreateNodes);
//   - the kube-apiserver flags the tests need (setAPIServerFlags) and a wait
//     for /readyz;
//   - ports below the kernel's ephemeral range (FreePorts);
//   - the parent-death signal, PIDs, Healthy and logs in Dir, below;
//   - SNATCH_TEST_KUBECONFIG, an existing cluster instead of a started one.
//
// Every process is started with PR_SET_PDEATHSIG, so the kernel kills it when
// the process that started it dies for any reason, including SIGKILL or a
// test timeout. envtest gives its processes nothing but a process group of
// their own: with the binaries started that way, TestKilledTestLeavesNoProcess
// finds etcd and kube-apiserver still running after it SIGKILLs the test
// process that started them. So envtest runs wrapper scripts (in Dir/bin)
// instead, which record their PID, kept by exec, in Dir/<name>.pid and exec
// the binary under setpriv --pdeathsig KILL (util-linux). The PID files give
// PIDs and Healthy the processes envtest keeps to itself. The wrappers' paths
// are set explicitly, so KUBEBUILDER_ASSETS and TEST_ASSET_* cannot bypass
// them; SNATCH_K8S_BIN names another bin directory. Stop shuts the components
// down in reverse order.
//
// Nodes have no kubelet. CreateNodes writes Node objects with capacity, pool
// labels and a Ready condition; kube-controller-manager runs without its
// node-lifecycle controller and kube-apiserver without the
// TaintNodesByCondition admission plugin, so nothing ever marks them NotReady
// or taints them.
//
// The same tests can run against an existing cluster instead (kind, for
// example): set Options.Kubeconfig or the environment variable
// SNATCH_TEST_KUBECONFIG. Nothing is started or stopped then.
package framework

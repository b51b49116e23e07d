// Package framework starts a real Kubernetes control plane for tests and for
// `make run`: etcd, kube-apiserver and, on request, kube-scheduler and
// kube-controller-manager, each as a separate process built from Go modules by
// `make tools` (see hack/tools). There is no container engine on the machines
// this project is developed and tested on, so nothing here needs one.
//
// Every process is started with PR_SET_PDEATHSIG, so the kernel kills it when
// the process that started it dies for any reason, including SIGKILL or a
// test timeout. Stop shuts the components down in reverse order.
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

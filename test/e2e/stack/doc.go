// Package stack runs the whole of KIM Snatch on a local control plane:
// etcd, kube-apiserver, kube-scheduler and kube-controller-manager from
// test/framework, Nodes in a Kyma pool and a customer pool, a stand-in for
// Gardener cert-management, a kubelet-style projector of the certificate
// Secret, snatch-webhook replicas behind a round-robin proxy that stands in
// for their Service, and leader-elected cabundle-syncer replicas.
//
// `make run` and the end-to-end suite both use it. Everything runs as real
// processes; nothing is simulated but the parts a cluster without kubelets
// and without a container engine lacks.
package stack

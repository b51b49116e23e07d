// Package stack runs the whole of KIM Snatch on a local control plane:
// etcd, kube-apiserver, kube-scheduler and kube-controller-manager from
// test/framework, Nodes in a Kyma pool and a customer pool, a stand-in for
// Gardener cert-management, a kubelet-style projector of the certificate
// Secret, snatch-webhook replicas behind the Service and the
// MutatingWebhookConfiguration of deploy/webhook, and leader-elected
// cabundle-syncer replicas.
//
// Without kube-proxy nothing routes a Service's ClusterIP, so
// kube-apiserver runs with aggregator routing: it calls the webhook at a
// Ready endpoint of the Service's EndpointSlices, which the stack writes
// (endpoints.go), one FQDN slice at 127.0.0.1 per replica, Ready as the
// replica's /readyz answers. docs/development.md says what that stands
// for in a cluster.
//
// `make run` and the end-to-end suite both use it. Everything runs as real
// processes; nothing is simulated but the parts a cluster without kubelets
// and without a container engine lacks.
package stack

// Package realnode runs a real Kubernetes node beside the control plane of
// test/framework: Debian's containerd, runc and CNI plugins, and the kubelet
// and kube-proxy built from the control plane's module. The shipped images
// run on it from the shipped manifests.
//
// It changes the host while it runs: routes, links, iptables and nft rules,
// mounts, cgroups, sysctls and a few fixed paths (host.go lists them). It
// records the host as it found it, puts it back on Stop, and reports any
// difference that remains. A run that was killed is cleaned up by the next
// Start, or by Clean.
//
// Containment is a hard rule: the Service, Pod and node ranges are routed
// to a local bridge before any component starts, and Start fails if an
// address of either range would follow the default route (network.go).
package realnode

package stack

// NodeLocalDNS as Gardener runs it on a shoot that enables it: a
// hostNetwork DaemonSet in kube-system, labelled k8s-app: node-local-dns,
// whose cache binds NodeLocalDNSAddress on every node and forwards the
// cluster's names to CoreDNS. With kube-proxy in IPVS mode the kubelet
// gives Pods that address as their resolver (deploy/README.md, "Network
// policies").
const (
	NodeLocalDNSAddress = "169.254.20.10"
	NodeLocalDNSName    = "node-local-dns"
	// CoreDNSImage is the image of test/e2e/neighbours/kube-dns, which
	// node-local-dns is built on.
	CoreDNSImage = "coredns:e2e"
)

package manifests

import (
	"fmt"
	"net/netip"
	"slices"
	"testing"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
)

// allowToDNS is the syncer's and the check Job's DNS allow.
const allowToDNS = "kyma-project.io--kim-snatch-allow-to-dns"

// Where a Pod's resolver is on each shape of Gardener shoot, from
// Gardener's own constants and defaults: node-local-dns's link-local
// address (the kubelet's resolver with NodeLocalDNS and kube-proxy in IPVS
// mode), and the kube-dns ClusterIP, the tenth address of the Service
// range, which node-local-dns binds on the node with kube-proxy in
// iptables mode: Gardener's default range, Kyma's and kubeadm's.
var dnsResolvers = []struct{ name, addr string }{
	{"node_local_dns_is_covered", "169.254.20.10"},
	{"gardener_default_service_range_is_covered", "100.64.0.10"},
	{"kyma_default_service_range_is_covered", "100.104.0.10"},
	{"kubeadm_service_range_is_covered", "10.96.0.10"},
}

// sharedAddressSpace is where carrier-grade NAT lives, and Gardener's and
// Kyma's Service ranges: private to a network, though netip does not call
// it private.
var sharedAddressSpace = netip.MustParsePrefix("100.64.0.0/10")

// The DNS allow opens each resolver a shoot may give the syncer, and only
// DNS: the cluster's DNS Pods on 53 and 8053, and, to addresses that no
// selector can name, port 53 alone, never to a public address, nor to the
// rest of the link-local range (where a cloud's metadata service is).
func TestDNSAllowOpensEveryResolverOfAShootAndNoMore(t *testing.T) {
	objs := render(t, syncerBase)
	var np networkingv1.NetworkPolicy
	typed(t, find(t, objs, "NetworkPolicy", allowToDNS), &np)
	syncerPods := deployment(t, objs, "cabundle-syncer")
	var checkJob batchv1.CronJob
	typed(t, find(t, objs, "CronJob", "kim-snatch-check"), &checkJob)
	for _, pod := range []map[string]string{syncerPods.Spec.Template.Labels, checkJob.Spec.JobTemplate.Spec.Template.Labels} {
		if !labelSelects(t, &np.Spec.PodSelector, pod) {
			t.Errorf("NetworkPolicy %s does not select Pods labelled %v", np.Name, pod)
		}
	}
	if !slices.Equal(np.Spec.PolicyTypes, []networkingv1.PolicyType{networkingv1.PolicyTypeEgress}) || len(np.Spec.Ingress) != 0 {
		t.Errorf("NetworkPolicy %s has policy types %v and %d ingress rules, want egress only", np.Name, np.Spec.PolicyTypes, len(np.Spec.Ingress))
	}
	var blocks []netip.Prefix
	for i, rule := range np.Spec.Egress {
		ports := dnsPorts(t, rule)
		if len(rule.To) == 0 {
			t.Errorf("egress rule %d opens %v to every address", i, ports)
		}
		for _, peer := range rule.To {
			switch {
			case peer.IPBlock != nil:
				blocks = append(blocks, ipBlock(t, peer.IPBlock))
				if !slices.Equal(ports, []string{"53/TCP", "53/UDP"}) {
					t.Errorf("egress rule %d opens %v to %s, want 53/TCP and 53/UDP", i, ports, peer.IPBlock.CIDR)
				}
			case peer.NamespaceSelector == nil || peer.PodSelector == nil ||
				peer.NamespaceSelector.MatchLabels[corev1.LabelMetadataName] != "kube-system" || peer.PodSelector.MatchLabels["k8s-app"] != "kube-dns":
				t.Errorf("egress rule %d names peer %+v, want the DNS Pods of kube-system", i, peer)
			case !slices.Equal(ports, []string{"53/TCP", "53/UDP", "8053/TCP", "8053/UDP"}):
				t.Errorf("egress rule %d opens %v to the DNS Pods, want 53 and 8053, TCP and UDP", i, ports)
			}
		}
	}
	assertDNSBlocks(t, blocks)
}

// assertDNSBlocks holds the ipBlocks of the DNS allow to covering each
// resolver of dnsResolvers, and no public or other link-local address.
func assertDNSBlocks(t *testing.T, blocks []netip.Prefix) {
	t.Helper()
	covers := func(addr netip.Addr) bool {
		return slices.ContainsFunc(blocks, func(p netip.Prefix) bool { return p.Contains(addr) })
	}
	for _, r := range dnsResolvers {
		t.Run(r.name, func(t *testing.T) {
			if !covers(netip.MustParseAddr(r.addr)) {
				t.Errorf("no ipBlock covers %s in %v", r.addr, blocks)
			}
		})
	}
	for _, p := range blocks {
		first, last := p.Masked().Addr(), lastAddr(p)
		private := first.IsPrivate() && last.IsPrivate() || sharedAddressSpace.Contains(first) && sharedAddressSpace.Contains(last)
		if linkLocalHost := p.IsSingleIP() && p.Addr().IsLinkLocalUnicast(); !private && !linkLocalHost {
			t.Errorf("ipBlock %s holds addresses that are neither private nor shared, or a link-local range wider than one address", p)
		}
	}
	for _, addr := range []string{"8.8.8.8", "1.1.1.1", "169.254.169.254", "169.254.20.11"} {
		if covers(netip.MustParseAddr(addr)) {
			t.Errorf("an ipBlock of %v covers %s", blocks, addr)
		}
	}
}

// dnsPorts returns the rule's ports as "port/protocol", sorted, and fails
// t on a rule that opens every port or a range.
func dnsPorts(t *testing.T, rule networkingv1.NetworkPolicyEgressRule) []string {
	t.Helper()
	if len(rule.Ports) == 0 {
		t.Errorf("egress rule to %+v opens every port", rule.To)
	}
	var out []string
	for _, p := range rule.Ports {
		if p.Port == nil || p.EndPort != nil || p.Protocol == nil {
			t.Errorf("egress port %+v: want one port with its protocol", p)
			continue
		}
		out = append(out, fmt.Sprintf("%s/%s", p.Port.String(), *p.Protocol))
	}
	slices.Sort(out)
	return out
}

// ipBlock parses the block's CIDR and fails t on exceptions, which the
// rules need none of.
func ipBlock(t *testing.T, b *networkingv1.IPBlock) netip.Prefix {
	t.Helper()
	p, err := netip.ParsePrefix(b.CIDR)
	if err != nil || p != p.Masked() || len(b.Except) != 0 {
		t.Errorf("ipBlock %+v: want a masked CIDR without exceptions (%v)", b, err)
	}
	return p
}

// lastAddr is the last address of p.
func lastAddr(p netip.Prefix) netip.Addr {
	b := p.Masked().Addr().As16()
	bits := p.Bits()
	if p.Addr().Is4() {
		bits += 96
	}
	for i := bits; i < 128; i++ {
		b[i/8] |= 1 << (7 - i%8)
	}
	a := netip.AddrFrom16(b)
	if p.Addr().Is4() {
		return a.Unmap()
	}
	return a
}

package realnode

import (
	"encoding/binary"
	"fmt"
	"net"
	"net/netip"
	"slices"
	"strings"
)

// The node's addresses. None of them is reachable beyond this machine:
// the three ranges are routed to the local bridge ContainDevice.
const (
	// ServiceCIDR is the Service range; its first address is the
	// kubernetes Service's ClusterIP.
	ServiceCIDR = "10.96.0.0/16"
	// PodCIDR is the Pod range; the node takes PodSubnet from it.
	PodCIDR   = "10.244.0.0/16"
	PodSubnet = "10.244.0.0/24"
	// NodeCIDR holds NodeIP, the node's address, which kube-apiserver
	// binds and advertises and the kubelet serves on, so that `kubectl
	// logs` and `exec` work.
	NodeCIDR = "10.250.0.0/16"
	NodeIP   = "10.250.0.10"

	// ContainDevice is an empty bridge: this kernel has no dummy links.
	// A packet routed to it goes nowhere.
	ContainDevice = "ksn-contain"
	// PodBridge is the CNI bridge the Pods are attached to.
	PodBridge = "ksn-pods"
)

// containedRanges are routed to ContainDevice.
var containedRanges = []string{ServiceCIDR, PodCIDR, NodeCIDR}

// contain creates ContainDevice, gives it NodeIP, routes every contained
// range to it and then checks that no address of them would leave the
// machine.
func contain() error {
	steps := [][]string{
		{"ip", "link", "add", ContainDevice, "type", "bridge"},
		{"ip", "link", "set", ContainDevice, "up"},
		{"ip", "addr", "add", NodeIP + "/32", "dev", ContainDevice},
	}
	for _, r := range containedRanges {
		steps = append(steps, []string{"ip", "route", "replace", r, "dev", ContainDevice})
	}
	for _, s := range steps {
		if _, err := run(s...); err != nil {
			return err
		}
	}
	return CheckContained()
}

// CheckContained asks the kernel with `ip route get` how it would route the
// first, a middle and the last address of each contained range, and fails
// if any of them would use the default route or a device other than the
// local bridges.
func CheckContained() error {
	for _, r := range containedRanges {
		for _, addr := range probeAddresses(r) {
			out, err := run("ip", "-o", "route", "get", addr)
			if err != nil {
				return err
			}
			dev := field(out, "dev")
			if dev != ContainDevice && dev != PodBridge && dev != "lo" {
				return fmt.Errorf("containment: %s (range %s) would leave through %q: %s", addr, r, dev, strings.TrimSpace(out))
			}
			if field(out, "via") != "" {
				return fmt.Errorf("containment: %s (range %s) would go through a gateway: %s", addr, r, strings.TrimSpace(out))
			}
		}
	}
	return nil
}

// probeAddresses returns the first, a middle and the last address of cidr.
func probeAddresses(cidr string) []string {
	p := netip.MustParsePrefix(cidr).Masked()
	size := uint32(1) << (32 - p.Bits())
	base := binary.BigEndian.Uint32(p.Addr().AsSlice())
	var out []string
	for _, off := range []uint32{1, size / 2, size - 2} {
		out = append(out, net.IP(binary.BigEndian.AppendUint32(nil, base+off)).String())
	}
	return out
}

// field returns the word after key in the output of `ip route get`.
func field(out, key string) string {
	words := strings.Fields(out)
	if i := slices.Index(words, key); i >= 0 && i+1 < len(words) {
		return words[i+1]
	}
	return ""
}

package realnode

import (
	"github.com/kyma-project/kim-snatch/test/framework"
	"os"
	"slices"
	"strings"
	"testing"
)

func TestProbeAddressesSpanTheRange(t *testing.T) {
	framework.InTier(t, framework.Smoke, "no node: the containment's probes")
	framework.Shares(t)
	got := probeAddresses("10.96.0.0/16")
	want := []string{"10.96.0.1", "10.96.128.0", "10.96.255.254"}
	if !slices.Equal(got, want) {
		t.Errorf("probeAddresses(10.96.0.0/16) = %v, want %v", got, want)
	}
}

func TestFieldReadsIPRouteGet(t *testing.T) {
	framework.InTier(t, framework.Smoke, "no node: the containment's reader")
	framework.Shares(t)
	out := "10.96.0.1 dev ksn-contain src 10.250.0.10 uid 0 \\    cache"
	if got := field(out, "dev"); got != "ksn-contain" {
		t.Errorf("dev = %q", got)
	}
	if got := field("1.1.1.1 via 192.0.2.1 dev eth0 src 192.0.2.2", "via"); got != "192.0.2.1" {
		t.Errorf("via = %q", got)
	}
}

func TestDiffNamesEveryChange(t *testing.T) {
	framework.InTier(t, framework.Smoke, "no node: the host record's diff")
	framework.Shares(t)
	before := HostState{
		Links: []string{"lo", "eth0"}, Rules: []string{"table ip filter {"},
		Sysctls: map[string]string{"net/ipv4/ip_forward": "0"},
	}
	if d := before.Diff(before); d != "" {
		t.Fatalf("a state differs from itself: %s", d)
	}
	after := HostState{
		Links: []string{"lo", "eth0", PodBridge}, Mounts: []string{"/var/tmp/x"},
		Sysctls: map[string]string{"net/ipv4/ip_forward": "1"},
	}
	d := after.Diff(before)
	for _, want := range []string{"link added: " + PodBridge, "nft/iptables rule removed: table ip filter {", "mount added: /var/tmp/x", `sysctl net/ipv4/ip_forward: "1", was "0"`} {
		if !strings.Contains(d, want) {
			t.Errorf("diff lacks %q:\n%s", want, d)
		}
	}
}

func TestRulesetIgnoresCounters(t *testing.T) {
	framework.InTier(t, framework.Smoke, "no node: the host record's rules")
	framework.Shares(t)
	got := ruleset([]string{"  ip daddr 10.96.0.1 counter packets 12 bytes 720 jump X"})
	if want := "ip daddr 10.96.0.1 counter jump X"; got[0] != want {
		t.Errorf("ruleset = %q, want %q", got[0], want)
	}
}

// Prepare routes every contained range to the local bridge before anything
// starts, and Stop leaves the host as it was. Needs root.
func TestContainmentAndHostLeftAsFound(t *testing.T) {
	framework.InTier(t, framework.Smoke, "nothing leaves the machine, and the host is left as found")
	framework.Alone(t, "it compares the host's network before and after, which other tests change")
	if err := CheckPrerequisites(); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal(err)
		}
		t.Skip(err)
	}
	n, err := Prepare(Options{})
	if err != nil {
		t.Fatal(err)
	}
	before := n.before // after Prepare cleaned up what a killed run left
	stopped := false
	t.Cleanup(func() {
		if !stopped {
			_ = n.Stop()
		}
	})
	for _, r := range containedRanges {
		for _, a := range probeAddresses(r) {
			out, err := run("ip", "-o", "route", "get", a)
			if err != nil {
				t.Fatal(err)
			}
			local := strings.Contains(out, "dev "+ContainDevice) || strings.Contains(out, "dev lo")
			if strings.Contains(out, " via ") || !local {
				t.Errorf("%s would leave the machine: %s", a, out)
			}
		}
	}
	stopped = true
	if err := n.Stop(); err != nil {
		t.Fatal(err)
	}
	after, err := ReadHostState(DefaultStateDir)
	if err != nil {
		t.Fatal(err)
	}
	if d := after.Diff(before); d != "" {
		t.Errorf("the host differs after Stop:\n%s", d)
	}
}

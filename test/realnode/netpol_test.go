package realnode

import (
	"github.com/kyma-project/kim-snatch/test/framework"
	"maps"
	"strings"
	"testing"
)

func TestVerdictsSumsPacketCountByVerdict(t *testing.T) {
	framework.InTier(t, framework.Smoke, "no node: kube-network-policies' verdicts")
	framework.Shares(t)
	cases := []struct {
		name    string
		text    string
		want    map[string]float64
		wantErr bool
	}{
		{"sums_protocols_and_families", `# TYPE kube_network_policies_packet_count counter
kube_network_policies_packet_count{family="IPv4",protocol="TCP",verdict="accept"} 7
kube_network_policies_packet_count{family="IPv4",protocol="UDP",verdict="accept"} 2
kube_network_policies_packet_count{family="IPv4",protocol="TCP",verdict="drop"} 3
kube_network_policies_packet_process_duration_microseconds_count 12
`, map[string]float64{"accept": 9, "drop": 3}, false},
		{"no_packet_yet_gives_no_verdicts", "kube_network_policies_packet_process_duration_microseconds_count 0\n", map[string]float64{}, false},
		{"garbled_sample_is_an_error", `kube_network_policies_packet_count{verdict="drop"} x` + "\n", nil, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := verdicts(strings.NewReader(c.text))
			if (err != nil) != c.wantErr {
				t.Fatalf("verdicts() error = %v, want error: %v", err, c.wantErr)
			}
			if !c.wantErr && !maps.Equal(got, c.want) {
				t.Errorf("verdicts() = %v, want %v", got, c.want)
			}
		})
	}
}

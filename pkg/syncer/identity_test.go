package syncer

import "testing"

func TestHolderPodNameIsTheIdentityBeforeTheLastUnderscore(t *testing.T) {
	tests := []struct{ name, identity, want string }{
		{name: "pod_and_uuid_gives_the_pod", identity: "cabundle-syncer-7d9f8c6b5-x2k4q_0b6f1c3e-5d7a-4f0e-9c8b-2a1d3e4f5a6b", want: "cabundle-syncer-7d9f8c6b5-x2k4q"},
		{name: "last_underscore_wins", identity: "a_b_c", want: "a_b"},
		{name: "no_underscore_gives_the_whole_identity", identity: "laptop", want: "laptop"},
		{name: "no_pod_name_gives_empty", identity: "_uuid", want: ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := HolderPodName(tt.identity); got != tt.want {
				t.Errorf("HolderPodName(%q) = %q, want %q", tt.identity, got, tt.want)
			}
		})
	}
}

// The identity LeaderIdentity makes gives its Pod back, also for a Pod
// name longer than a hostname may be.
func TestLeaderIdentityGivesItsPodBack(t *testing.T) {
	for _, pod := range []string{"cabundle-syncer-7d9f8c6b5-x2k4q", "cabundle-syncer-long-long-long-long-long-long-long-long-long-long-7d9f8c6b5-x2k4q"} {
		id := LeaderIdentity(pod)
		if got := HolderPodName(id); got != pod {
			t.Errorf("HolderPodName(LeaderIdentity(%q)) = %q (identity %q)", pod, got, id)
		}
		if id == LeaderIdentity(pod) {
			t.Errorf("two identities of Pod %s are equal: %q", pod, id)
		}
	}
}

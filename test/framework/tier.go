package framework

import (
	"fmt"
	"os"
	"testing"
)

// TierEnv names the tier of the node suites a run takes (docs/development.md,
// "Two tiers"): smoke for make test, full for make e2e. Unset means full, so
// that `go test -run` of one scenario runs it.
const TierEnv = "SNATCH_TIER"

// Tier is a tier of the node suites. Each node scenario is in exactly one;
// the full tier runs the smoke tier's scenarios too.
type Tier string

const (
	// Smoke proves each capability once, as shipped: make test, and so CI.
	Smoke Tier = "smoke"
	// Full is every other scenario: make e2e, before a change under
	// deploy/, cmd/, pkg/ or test/e2e lands, and before every release.
	Full Tier = "full"
)

// RunTier is the tier this run takes, from TierEnv.
func RunTier() (Tier, error) {
	switch v := Tier(os.Getenv(TierEnv)); v {
	case "", Full:
		return Full, nil
	case Smoke:
		return Smoke, nil
	default:
		return "", fmt.Errorf("%s=%q: want %q or %q", TierEnv, v, Smoke, Full)
	}
}

// Runs reports whether a run of this tier runs a scenario of tier.
func (run Tier) Runs(tier Tier) bool {
	return run == Full || tier == Smoke
}

// InTier places the scenario t in tier, for the reason why, and skips it
// when this run's tier does not take it. Every node test calls it first
// (pkg/conventions holds them to it), so that its log says where it is and
// why.
func InTier(t testing.TB, tier Tier, why string) {
	t.Helper()
	if tier != Smoke && tier != Full {
		t.Fatalf("tier %q: want %q or %q", tier, Smoke, Full)
	}
	run, err := RunTier()
	if err != nil {
		t.Fatal(err)
	}
	if !run.Runs(tier) {
		t.Skipf("%s tier (make e2e): %s", tier, why)
	}
	t.Logf("%s tier: %s", tier, why)
}

package framework

import "testing"

func TestRunTierReadsTheEnvironmentAndRefusesOtherValues(t *testing.T) {
	tests := []struct {
		name, env string
		want      Tier
		wantErr   bool
	}{
		{name: "unset_runs_the_full_tier", env: "", want: Full},
		{name: "full_runs_the_full_tier", env: "full", want: Full},
		{name: "smoke_runs_the_smoke_tier", env: "smoke", want: Smoke},
		{name: "a_misspelt_tier_is_refused", env: "smok", wantErr: true},
		{name: "an_upper_case_tier_is_refused", env: "SMOKE", wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Setenv(TierEnv, tt.env)
			got, err := RunTier()
			if (err != nil) != tt.wantErr || got != tt.want {
				t.Fatalf("RunTier() = %q, %v; want %q, error %v", got, err, tt.want, tt.wantErr)
			}
		})
	}
}

func TestAFullRunTakesBothTiersAndASmokeRunOnlyTheSmoke(t *testing.T) {
	tests := []struct {
		name        string
		run, tier   Tier
		wantRunning bool
	}{
		{name: "full_run_takes_a_smoke_scenario", run: Full, tier: Smoke, wantRunning: true},
		{name: "full_run_takes_a_full_scenario", run: Full, tier: Full, wantRunning: true},
		{name: "smoke_run_takes_a_smoke_scenario", run: Smoke, tier: Smoke, wantRunning: true},
		{name: "smoke_run_leaves_a_full_scenario", run: Smoke, tier: Full, wantRunning: false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.run.Runs(tt.tier); got != tt.wantRunning {
				t.Fatalf("%s run of a %s scenario: runs = %v, want %v", tt.run, tt.tier, got, tt.wantRunning)
			}
		})
	}
}

func TestInTierSkipsAFullScenarioOnlyInASmokeRun(t *testing.T) {
	tests := []struct {
		name, env   string
		tier        Tier
		wantSkipped bool
	}{
		{name: "smoke_run_skips_a_full_scenario", env: "smoke", tier: Full, wantSkipped: true},
		{name: "smoke_run_runs_a_smoke_scenario", env: "smoke", tier: Smoke, wantSkipped: false},
		{name: "default_run_runs_a_full_scenario", env: "", tier: Full, wantSkipped: false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Setenv(TierEnv, tt.env)
			var scenario *testing.T
			t.Run("scenario", func(t *testing.T) {
				scenario = t
				InTier(t, tt.tier, "the reason")
			})
			if scenario.Skipped() != tt.wantSkipped {
				t.Fatalf("%s=%q, a %s scenario: skipped = %v, want %v", TierEnv, tt.env, tt.tier, scenario.Skipped(), tt.wantSkipped)
			}
		})
	}
}

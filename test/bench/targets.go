package bench

import (
	"cmp"
	"fmt"
	"math"
	"slices"
)

// targetsOf checks the figures against the project's targets, which were
// set against kim-snatch, the single-binary predecessor, on a two-core
// machine. Where a target could be read off several cells, the worst cell
// counts.
func targetsOf(r *Results) []Target {
	var ts []Target
	if r.Webhook != nil {
		ts = webhookTargets(r.Webhook)
	}
	if a := r.APIServer; a != nil {
		ts = append(ts, Target{Figure: "API server: Pods/s with the webhook over the policy (B/C)",
			Reference: "B/A 0.48, C/A 0.56 (B/C 0.86)", Target: "≥ 1.0",
			Measured: a.BOverC.PodsPerSecond.Ratio, Unit: "ratio", Met: a.BOverC.PodsPerSecond.Ratio >= 1,
			Source: fmt.Sprintf("apiserver, B/A %.2f, C/A %.2f", a.BOverA.PodsPerSecond.Ratio, a.COverA.PodsPerSecond.Ratio)})
	}
	if s := r.Syncer; s != nil {
		ts = append(ts, Target{Figure: "syncer: Secret write → caBundle visible, p99", Reference: "-", Target: "≤ 1 s",
			Measured: s.PropagationP99Ms.Value, Unit: "ms", Met: s.PropagationP99Ms.Value <= 1000,
			Source: fmt.Sprintf("syncer, %d rotations", s.Samples)})
		ts = append(ts, Target{Figure: fmt.Sprintf("syncer: RSS with %d unrelated Secrets over none", s.UnrelatedSecrets),
			Reference: "-", Target: "within ±10%", Measured: s.RSSMiB.Ratio, Unit: "ratio",
			Met: math.Abs(s.RSSMiB.Ratio-1) <= 0.10, Source: "syncer"})
	}
	if c := r.Check; c != nil {
		ts = append(ts, Target{Figure: fmt.Sprintf("check: peak RSS over %d Pods on %d Nodes", c.Pods, c.Nodes), Reference: "-",
			Target: fmt.Sprintf("≤ %.0f MiB (the Job's limit)", c.MemoryLimitMiB), Measured: c.PeakRSSMiB.Value, Unit: "MiB",
			Met: c.PeakRSSMiB.Value <= c.MemoryLimitMiB, Source: fmt.Sprintf("check, largest of %d runs", len(c.CheckRuns))})
	}
	return ts
}

// webhookTargets checks the webhook's figures: server CPU per review,
// reviews per second on one core, p99 at concurrency 1 and RSS, each in
// the snatch-webhook's cell where it is largest.
func webhookTargets(w *WebhookResults) []Target {
	var ts []Target
	for _, t := range []struct {
		figure, ref, target, unit string
		keep                      func(WebhookCell) bool
		value                     func(LoadStats) float64
		met                       func(float64) bool
		source                    func(WebhookCell) string
	}{
		{"server CPU per 5.5 KB review", "0.9 ms", "≤ 0.09 ms", "ms",
			func(c WebhookCell) bool { return c.Payload == "pod_5k5" },
			func(s LoadStats) float64 { return s.CPUMsPerReview }, func(v float64) bool { return v <= 0.09 },
			func(c WebhookCell) string {
				return fmt.Sprintf("webhook %s, worst concurrency (%d)", c.Payload, c.Concurrency)
			}},
		{"server CPU per 8.8 KB review (managedFields)", "1.6 ms", "≤ 0.15 ms", "ms",
			func(c WebhookCell) bool { return c.Payload == "pod_8k8_managed_fields" },
			func(s LoadStats) float64 { return s.CPUMsPerReview }, func(v float64) bool { return v <= 0.15 },
			func(c WebhookCell) string {
				return fmt.Sprintf("webhook %s, worst concurrency (%d)", c.Payload, c.Concurrency)
			}},
		{"reviews/s on one core (5.5 KB)", "~1.1k", "≥ 10k", "reviews/s",
			func(c WebhookCell) bool { return c.Payload == "pod_5k5" },
			func(s LoadStats) float64 { return s.ReviewsPerSecond }, func(v float64) bool { return v >= 10_000 },
			func(c WebhookCell) string {
				return fmt.Sprintf("webhook pod_5k5, best concurrency (%d)", c.Concurrency)
			}},
		{"p99 at concurrency 1", "2.6 ms", "≤ 0.3 ms", "ms",
			func(c WebhookCell) bool { return c.Concurrency == 1 },
			func(s LoadStats) float64 { return s.P99Ms }, func(v float64) bool { return v <= 0.3 },
			func(c WebhookCell) string { return fmt.Sprintf("webhook concurrency 1, worst payload (%s)", c.Payload) }},
		{"RSS under load", "45 MiB", "≤ 20 MiB", "MiB",
			func(WebhookCell) bool { return true },
			func(s LoadStats) float64 { return s.RSSMiB }, func(v float64) bool { return v <= 20 },
			func(WebhookCell) string { return "webhook, largest RSS seen in any cell" }},
	} {
		cells := slices.DeleteFunc(slices.Clone(w.Cells), func(c WebhookCell) bool { return !t.keep(c) })
		if len(cells) == 0 {
			continue
		}
		c := slices.MaxFunc(cells, func(a, b WebhookCell) int { return cmp.Compare(t.value(a.Snatch), t.value(b.Snatch)) })
		v := t.value(c.Snatch)
		ts = append(ts, Target{Figure: t.figure, Reference: t.ref, Target: t.target, Measured: v, Unit: t.unit, Met: t.met(v), Source: t.source(c)})
	}
	return ts
}

package bench

import (
	"fmt"
	"math"
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
// reviews per second on one core, p99 at concurrency 1 and RSS.
func webhookTargets(w *WebhookResults) []Target {
	var ts []Target
	for _, t := range []struct {
		payload, figure, ref string
		limit                float64
	}{
		{"pod_5k5", "server CPU per 5.5 KB review", "0.9 ms", 0.09},
		{"pod_8k8_managed_fields", "server CPU per 8.8 KB review (managedFields)", "1.6 ms", 0.15},
	} {
		worst, src := math.Inf(-1), ""
		for _, c := range w.Cells {
			if c.Payload == t.payload && c.Snatch.CPUMsPerReview > worst {
				worst, src = c.Snatch.CPUMsPerReview, fmt.Sprintf("webhook %s, worst concurrency (%d)", c.Payload, c.Concurrency)
			}
		}
		if src != "" {
			ts = append(ts, Target{Figure: t.figure, Reference: t.ref, Target: fmt.Sprintf("≤ %g ms", t.limit),
				Measured: worst, Unit: "ms", Met: worst <= t.limit, Source: src})
		}
	}
	best, src := 0.0, ""
	for _, c := range w.Cells {
		if c.Payload == "pod_5k5" && c.Snatch.ReviewsPerSecond > best {
			best, src = c.Snatch.ReviewsPerSecond, fmt.Sprintf("webhook pod_5k5, best concurrency (%d)", c.Concurrency)
		}
	}
	if src != "" {
		ts = append(ts, Target{Figure: "reviews/s on one core (5.5 KB)", Reference: "~1.1k", Target: "≥ 10k",
			Measured: best, Unit: "reviews/s", Met: best >= 10_000, Source: src})
	}
	worst, src := math.Inf(-1), ""
	for _, c := range w.Cells {
		if c.Concurrency == 1 && c.Snatch.P99Ms > worst {
			worst, src = c.Snatch.P99Ms, fmt.Sprintf("webhook concurrency 1, worst payload (%s)", c.Payload)
		}
	}
	if src != "" {
		ts = append(ts, Target{Figure: "p99 at concurrency 1", Reference: "2.6 ms", Target: "≤ 0.3 ms",
			Measured: worst, Unit: "ms", Met: worst <= 0.3, Source: src})
	}
	rss := 0.0
	for _, c := range w.Cells {
		rss = max(rss, c.Snatch.RSSMiB)
	}
	if len(w.Cells) > 0 {
		ts = append(ts, Target{Figure: "RSS under load", Reference: "45 MiB", Target: "≤ 20 MiB",
			Measured: rss, Unit: "MiB", Met: rss <= 20, Source: "webhook, largest RSS seen in any cell"})
	}
	return ts
}

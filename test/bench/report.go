package bench

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
)

// WriteTable writes the compact table of `make bench`. Ratios are the
// figure over its baseline.
func (r *Results) WriteTable(out io.Writer) error {
	m := r.Machine
	fmt.Fprintf(out, "KIM Snatch benchmarks, %s\n", r.Started.Format("2006-01-02 15:04 MST"))
	fmt.Fprintf(out, "machine: %d × %s, %s, %s, kernel %s, load average at start %.2f %.2f %.2f\n",
		m.CPUs, m.CPUModel, m.GoVersion, m.OSArch, m.Kernel, m.LoadAvg[0], m.LoadAvg[1], m.LoadAvg[2])
	s := r.Scale
	fmt.Fprintf(out, "scale: %s per webhook cell, benchtime %s, %d Pods per arm in %d rounds × %d creators, %d rotations, %d × %d KiB Secrets, check over %d Pods on %d Nodes × %d runs\n",
		s.CellDuration, s.BenchTime, s.Pods, s.Rounds, s.Creators, s.Rotations, s.UnrelatedSecrets, s.SecretSize>>10, s.CheckPods, s.CheckNodes, s.CheckRuns)
	if r.Webhook != nil {
		writeWebhook(out, r.Webhook)
	}
	if r.Handler != nil {
		writeHandler(out, r.Handler)
	}
	if r.APIServer != nil {
		writeAPIServer(out, r.APIServer)
	}
	if r.Syncer != nil {
		writeSyncer(out, r.Syncer)
	}
	if r.Check != nil {
		writeCheck(out, r.Check)
	}
	if r.Hostile != nil {
		writeHostile(out, r.Hostile)
	}
	if len(r.Targets) > 0 {
		writeTargets(out, r.Targets)
	}
	return nil
}

// newTable is one section's right-aligned table: every cell, the last
// included, ends in a tab.
func newTable(out io.Writer, header string) *tabwriter.Writer {
	tw := tabwriter.NewWriter(out, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, header)
	return tw
}

func writeWebhook(out io.Writer, w *WebhookResults) {
	fmt.Fprintf(out, "\n[webhook] HTTPS keep-alive, server pinned to CPU %d, load generator to CPU %d; ratio = snatch / generic\n", w.ServerCPU, w.LoadCPU)
	t := newTable(out, "payload\tconc\tserver\treviews/s\tp50 ms\tp99 ms\tp99.9 ms\tcpu ms/review\tcpu s/10k\tRSS MiB\tload cpu\treviews\t")
	for _, c := range w.Cells {
		for i, s := range []LoadStats{c.Snatch, c.Generic} {
			fmt.Fprintf(t, "%s\t%d\t%s\t%.0f\t%.3f\t%.3f\t%.3f\t%.4f\t%.3f\t%.1f\t%.2f\t%d\t\n", c.Payload, c.Concurrency, []string{"snatch", "generic"}[i],
				s.ReviewsPerSecond, s.P50Ms, s.P99Ms, s.P999Ms, s.CPUMsPerReview, s.CPUSecondsPer10k, s.RSSMiB, s.LoadCPUShare, s.Reviews)
		}
		fmt.Fprintf(t, "\t\tratio\t%.2f\t%.2f\t%.2f\t%.2f\t%.2f\t%.2f\t%.2f\t\t\t\n", c.ReviewsPerSecond.Ratio, c.P50Ms.Ratio, c.P99Ms.Ratio,
			c.P999Ms.Ratio, c.CPUMsPerReview.Ratio, c.CPUSecondsPer10k.Ratio, c.RSSMiB.Ratio)
	}
	_ = t.Flush()
}

func writeHandler(out io.Writer, h *HandlerResults) {
	fmt.Fprintf(out, "\n[handler] %s; ratio = variant / generic\n", h.Command)
	t := newTable(out, "payload\tvariant\tns/op\tB/op\tallocs/op\tns ratio\tB ratio\tallocs ratio\t")
	ratios := map[string]string{}
	for _, c := range h.Compare {
		ratios[c.Payload+"/"+c.Variant] = fmt.Sprintf("%.3f\t%.3f\t%.3f", c.NsPerOp.Ratio, c.BytesPerOp.Ratio, c.AllocsPerOp.Ratio)
	}
	for _, b := range h.Rows {
		r, ok := ratios[b.Payload+"/"+b.Variant]
		if !ok {
			r = "\t\t"
		}
		fmt.Fprintf(t, "%s\t%s\t%.0f\t%.0f\t%.0f\t%s\t\n", b.Payload, b.Variant, b.NsPerOp, b.BytesPerOp, b.AllocsPerOp, r)
	}
	_ = t.Flush()
}

func writeAPIServer(out io.Writer, a *APIServerResults) {
	args := "no extra kube-apiserver flags"
	if len(a.APIServerArgs) > 0 {
		args = strings.Join(a.APIServerArgs, " ")
	}
	fmt.Fprintf(out, "\n[apiserver] Pod creates, %d creators, rounds %s; policy %s (%s); webhook and policy agree on %d differential Pods\n",
		a.Creators, strings.Join(a.Order, " "), a.PolicyAPI, args, a.DifferentialCases)
	t := newTable(out, "arm\tnamespace\tPods\terrors\tPods/s\tp50 ms\tp99 ms\tmax ms\twith term\t")
	for i, s := range []ArmStats{a.A, a.B, a.C} {
		fmt.Fprintf(t, "%s\t%s\t%d\t%d\t%.0f\t%.2f\t%.2f\t%.2f\t%d\t\n", []string{"A none", "B webhook", "C policy"}[i],
			s.Namespace, s.Pods, s.Errors, s.PodsPerSecond, s.P50Ms, s.P99Ms, s.MaxMs, s.WithTerm)
	}
	for i, c := range []Comparison{a.BOverA, a.COverA, a.BOverC} {
		fmt.Fprintf(t, "%s\t\t\t\t%.3f\t%.3f\t%.3f\t\t\t\n", []string{"B/A", "C/A", "B/C"}[i], c.PodsPerSecond.Ratio, c.P50Ms.Ratio, c.P99Ms.Ratio)
	}
	_ = t.Flush()
}

func writeSyncer(out io.Writer, sy *SyncerResults) {
	fmt.Fprintf(out, "\n[syncer] %d rotations; baseline = a plain watch on the Secret, and RSS with no other Secrets\n", sy.Rotations)
	t := newTable(out, "figure\tvalue\tbaseline\tratio\t")
	for _, f := range []struct {
		p string
		f Figure
	}{{"p50", sy.PropagationP50Ms}, {"p99", sy.PropagationP99Ms}} {
		fmt.Fprintf(t, "Secret write → caBundle visible %s ms\t%.1f\t%.1f\t%.2f\t\n", f.p, f.f.Value, f.f.Baseline, f.f.Ratio)
	}
	fmt.Fprintf(t, "RSS MiB, %d × %d KiB Secrets vs none\t%.1f\t%.1f\t%.3f\t\n", sy.UnrelatedSecrets, sy.SecretSize>>10, sy.RSSMiB.Value, sy.RSSMiB.Baseline, sy.RSSMiB.Ratio)
	_ = t.Flush()
}

func writeCheck(out io.Writer, c *CheckResults) {
	fmt.Fprintf(out, "\n[check] cabundle-syncer check -o json over %d Pods (%d Kyma Pods) on %d Nodes, created in %.1f s (%.0f Pods/s, %d creators); baseline = %s\n",
		c.Pods, c.KymaPods, c.Nodes, c.CreateSeconds, c.CreatePodsPerSecond, c.Creators, c.Baseline)
	t := newTable(out, "process\trun\twall s\tcpu s\tpeak RSS MiB\t")
	for i, runs := range [][]MeasuredRun{c.CheckRuns, c.BaselineRuns} {
		for j, m := range runs {
			fmt.Fprintf(t, "%s\t%d\t%.2f\t%.2f\t%.1f\t\n", []string{"check", "baseline"}[i], j+1, m.Seconds, m.CPUSeconds, m.MaxRSSMiB)
		}
	}
	fmt.Fprintf(t, "ratio\t\t%.3f (median)\t\t%.3f (peak)\t\n", c.MedianSeconds.Ratio, c.PeakRSSMiB.Ratio)
	_ = t.Flush()
}

func writeTargets(out io.Writer, targets []Target) {
	fmt.Fprintln(out, "\n[targets]")
	tt := tabwriter.NewWriter(out, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tt, "figure\tkim-snatch\ttarget\tmeasured\t\tfrom")
	for _, t := range targets {
		verdict := "met"
		if !t.Met {
			verdict = "MISSED"
		}
		format := "%.3f" // ms and ratios
		switch t.Unit {
		case "reviews/s":
			format = "%.0f"
		case "MiB":
			format = "%.1f"
		}
		fmt.Fprintf(tt, "%s\t%s\t%s\t"+format+" %s\t%s\t%s\n", t.Figure, t.Reference, t.Target, t.Measured, t.Unit, verdict, t.Source)
	}
	_ = tt.Flush()
}

func writeHostile(out io.Writer, h *HostileResults) {
	fmt.Fprintf(out, "\n[hostile] %s at %d connections, beside %d claiming 32 MiB, %d sending the largest review slowly, %d idle; %s; ratio = hostile / quiet\n",
		h.Payload, h.Concurrency, h.ClaimConns, h.SlowConns, h.IdleConns, h.GoMemLimit)
	t := newTable(out, "run\treviews/s\tp50 ms\tp99 ms\tmax ms\tfailed\treviews\tRSS MiB\t")
	for i, s := range []LoadStats{h.Quiet, h.Hostile} {
		fmt.Fprintf(t, "%s\t%.0f\t%.3f\t%.3f\t%.3f\t%d\t%d\t%.1f\t\n", []string{"quiet", "hostile"}[i], s.ReviewsPerSecond, s.P50Ms, s.P99Ms, s.MaxMs, s.Errors, s.Reviews, s.RSSMiB)
	}
	fmt.Fprintf(t, "ratio\t\t\t%.2f\t\t\t\t%.2f\t\n", h.P99Ms.Ratio, h.RSSMiB.Ratio)
	_ = t.Flush()
}

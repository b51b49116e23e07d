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
	if len(r.Targets) > 0 {
		writeTargets(out, r.Targets)
	}
	return nil
}

// table is one section's right-aligned table.
type table struct{ tw *tabwriter.Writer }

func newTable(out io.Writer) table {
	return table{tabwriter.NewWriter(out, 0, 0, 2, ' ', tabwriter.AlignRight)}
}

func (t table) line(cells ...any) {
	parts := make([]string, len(cells))
	for i, c := range cells {
		parts[i] = fmt.Sprint(c)
	}
	fmt.Fprintln(t.tw, strings.Join(parts, "\t")+"\t")
}

func (t table) flush() { _ = t.tw.Flush() }

func writeWebhook(out io.Writer, w *WebhookResults) {
	fmt.Fprintf(out, "\n[webhook] HTTPS keep-alive, server pinned to CPU %d, load generator to CPU %d; ratio = snatch / generic\n", w.ServerCPU, w.LoadCPU)
	t := newTable(out)
	t.line("payload", "conc", "server", "reviews/s", "p50 ms", "p99 ms", "p99.9 ms", "cpu ms/review", "cpu s/10k", "RSS MiB", "load cpu", "reviews")
	for _, c := range w.Cells {
		for _, x := range []struct {
			name string
			s    LoadStats
		}{{"snatch", c.Snatch}, {"generic", c.Generic}} {
			t.line(c.Payload, c.Concurrency, x.name, f0(x.s.ReviewsPerSecond), f3(x.s.P50Ms), f3(x.s.P99Ms), f3(x.s.P999Ms),
				f4(x.s.CPUMsPerReview), f3(x.s.CPUSecondsPer10k), f1(x.s.RSSMiB), f2(x.s.LoadCPUShare), x.s.Reviews)
		}
		t.line("", "", "ratio", f2(c.ReviewsPerSecond.Ratio), f2(c.P50Ms.Ratio), f2(c.P99Ms.Ratio), f2(c.P999Ms.Ratio),
			f2(c.CPUMsPerReview.Ratio), f2(c.CPUSecondsPer10k.Ratio), f2(c.RSSMiB.Ratio), "", "")
	}
	t.flush()
}

func writeHandler(out io.Writer, h *HandlerResults) {
	fmt.Fprintf(out, "\n[handler] %s; ratio = variant / generic\n", h.Command)
	t := newTable(out)
	t.line("payload", "variant", "ns/op", "B/op", "allocs/op", "ns ratio", "B ratio", "allocs ratio")
	ratios := map[string]HandlerFigure{}
	for _, c := range h.Compare {
		ratios[c.Payload+"/"+c.Variant] = c
	}
	for _, b := range h.Rows {
		c, ok := ratios[b.Payload+"/"+b.Variant]
		nr, br, ar := "", "", ""
		if ok {
			nr, br, ar = f3(c.NsPerOp.Ratio), f3(c.BytesPerOp.Ratio), f3(c.AllocsPerOp.Ratio)
		}
		t.line(b.Payload, b.Variant, f0(b.NsPerOp), f0(b.BytesPerOp), f0(b.AllocsPerOp), nr, br, ar)
	}
	t.flush()
}

func writeAPIServer(out io.Writer, a *APIServerResults) {
	args := "no extra kube-apiserver flags"
	if len(a.APIServerArgs) > 0 {
		args = strings.Join(a.APIServerArgs, " ")
	}
	fmt.Fprintf(out, "\n[apiserver] Pod creates, %d creators, rounds %s; policy %s (%s); webhook and policy agree on %d differential Pods\n",
		a.Creators, strings.Join(a.Order, " "), a.PolicyAPI, args, a.DifferentialCases)
	t := newTable(out)
	t.line("arm", "namespace", "Pods", "errors", "Pods/s", "p50 ms", "p99 ms", "max ms", "with term")
	for _, x := range []struct {
		name string
		s    ArmStats
	}{{"A none", a.A}, {"B webhook", a.B}, {"C policy", a.C}} {
		t.line(x.name, x.s.Namespace, x.s.Pods, x.s.Errors, f0(x.s.PodsPerSecond), f2(x.s.P50Ms), f2(x.s.P99Ms), f2(x.s.MaxMs), x.s.WithTerm)
	}
	for _, x := range []struct {
		name string
		c    Comparison
	}{{"B/A", a.BOverA}, {"C/A", a.COverA}, {"B/C", a.BOverC}} {
		t.line(x.name, "", "", "", f3(x.c.PodsPerSecond.Ratio), f3(x.c.P50Ms.Ratio), f3(x.c.P99Ms.Ratio), "", "")
	}
	t.flush()
}

func writeSyncer(out io.Writer, sy *SyncerResults) {
	fmt.Fprintf(out, "\n[syncer] %d rotations; baseline = a plain watch on the Secret, and RSS with no other Secrets\n", sy.Rotations)
	t := newTable(out)
	t.line("figure", "value", "baseline", "ratio")
	t.line("Secret write → caBundle visible p50 ms", f1(sy.PropagationP50Ms.Value), f1(sy.PropagationP50Ms.Baseline), f2(sy.PropagationP50Ms.Ratio))
	t.line("Secret write → caBundle visible p99 ms", f1(sy.PropagationP99Ms.Value), f1(sy.PropagationP99Ms.Baseline), f2(sy.PropagationP99Ms.Ratio))
	t.line(fmt.Sprintf("RSS MiB, %d × %d KiB Secrets vs none", sy.UnrelatedSecrets, sy.SecretSize>>10), f1(sy.RSSMiB.Value), f1(sy.RSSMiB.Baseline), f3(sy.RSSMiB.Ratio))
	t.flush()
}

func writeCheck(out io.Writer, c *CheckResults) {
	fmt.Fprintf(out, "\n[check] cabundle-syncer check -o json over %d Pods (%d Kyma Pods) on %d Nodes, created in %.1f s (%.0f Pods/s, %d creators); baseline = %s\n",
		c.Pods, c.KymaPods, c.Nodes, c.CreateSeconds, c.CreatePodsPerSecond, c.Creators, c.Baseline)
	t := newTable(out)
	t.line("process", "run", "wall s", "cpu s", "peak RSS MiB")
	for _, x := range []struct {
		name string
		runs []MeasuredRun
	}{{"check", c.CheckRuns}, {"baseline", c.BaselineRuns}} {
		for i, m := range x.runs {
			t.line(x.name, i+1, f2(m.Seconds), f2(m.CPUSeconds), f1(m.MaxRSSMiB))
		}
	}
	t.line("ratio", "", f3(c.MedianSeconds.Ratio)+" (median)", "", f3(c.PeakRSSMiB.Ratio)+" (peak)")
	t.flush()
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
		fmt.Fprintf(tt, "%s\t%s\t%s\t%s %s\t%s\t%s\n", t.Figure, t.Reference, t.Target, fmtMeasured(t), t.Unit, verdict, t.Source)
	}
	_ = tt.Flush()
}

func fmtMeasured(t Target) string {
	switch t.Unit {
	case "reviews/s":
		return f0(t.Measured)
	case "ratio":
		return f3(t.Measured)
	case "MiB":
		return f1(t.Measured)
	default:
		return f3(t.Measured)
	}
}

func f0(v float64) string { return fmt.Sprintf("%.0f", v) }
func f1(v float64) string { return fmt.Sprintf("%.1f", v) }
func f2(v float64) string { return fmt.Sprintf("%.2f", v) }
func f3(v float64) string { return fmt.Sprintf("%.3f", v) }
func f4(v float64) string { return fmt.Sprintf("%.4f", v) }

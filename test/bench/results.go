package bench

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"time"
)

// Results are everything one run measured. Each comparison is a Figure: the
// value, the baseline measured in the same run, and value ÷ baseline.
type Results struct {
	Started  time.Time `json:"started"`
	Finished time.Time `json:"finished"`
	Machine  Machine   `json:"machine"`
	Scale    Scale     `json:"scale"`

	Webhook   *WebhookResults   `json:"webhook,omitempty"`
	Handler   *HandlerResults   `json:"handler,omitempty"`
	APIServer *APIServerResults `json:"apiserver,omitempty"`
	Syncer    *SyncerResults    `json:"syncer,omitempty"`
	Check     *CheckResults     `json:"check,omitempty"`
	Hostile   *HostileResults   `json:"hostile,omitempty"`

	// Targets compare the figures with the project's targets.
	Targets []Target `json:"targets,omitempty"`
}

// Machine describes where the run happened.
type Machine struct {
	CPUs      int        `json:"cpus"`
	CPUModel  string     `json:"cpu_model"`
	GoVersion string     `json:"go_version"`
	OSArch    string     `json:"os_arch"`
	Kernel    string     `json:"kernel"`
	LoadAvg   [3]float64 `json:"load_average_at_start"`
}

// describeMachine reads the machine from runtime and /proc.
func describeMachine() (Machine, error) {
	m := Machine{CPUs: runtime.NumCPU(), GoVersion: runtime.Version(), OSArch: runtime.GOOS + "/" + runtime.GOARCH}
	if b, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		for _, line := range strings.Split(string(b), "\n") {
			if k, v, ok := strings.Cut(line, ":"); ok && strings.TrimSpace(k) == "model name" {
				m.CPUModel = strings.TrimSpace(v)
				break
			}
		}
	}
	if b, err := os.ReadFile("/proc/sys/kernel/osrelease"); err == nil {
		m.Kernel = strings.TrimSpace(string(b))
	}
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return m, fmt.Errorf("read the load average: %w", err)
	}
	fields := strings.Fields(string(b))
	for i := 0; i < 3 && i < len(fields); i++ {
		if m.LoadAvg[i], err = strconv.ParseFloat(fields[i], 64); err != nil {
			return m, fmt.Errorf("parse /proc/loadavg %q: %w", b, err)
		}
	}
	return m, nil
}

// Scale records the Config figures of the run.
type Scale struct {
	CellDuration     string `json:"cell_duration"`
	CellMaxReviews   int    `json:"cell_max_reviews"`
	Concurrency      []int  `json:"concurrency"`
	BenchTime        string `json:"benchtime"`
	Pods             int    `json:"pods_per_arm"`
	Rounds           int    `json:"rounds"`
	Creators         int    `json:"creators"`
	Rotations        int    `json:"rotations"`
	UnrelatedSecrets int    `json:"unrelated_secrets"`
	SecretSize       int    `json:"secret_size_bytes"`
	CheckPods        int    `json:"check_pods"`
	CheckNodes       int    `json:"check_nodes"`
	CheckRuns        int    `json:"check_runs"`
}

func scaleOf(c Config) Scale {
	return Scale{
		CellDuration: c.CellDuration.String(), CellMaxReviews: c.CellMaxReviews, Concurrency: c.Concurrency,
		BenchTime: c.BenchTime, Pods: c.Pods, Rounds: c.Rounds, Creators: c.Creators,
		Rotations: c.Rotations, UnrelatedSecrets: c.UnrelatedSecrets, SecretSize: c.SecretSize,
		CheckPods: c.CheckPods, CheckNodes: c.CheckNodes, CheckRuns: c.CheckRuns,
	}
}

// Figure is a value beside its same-run baseline. Ratio is
// Value ÷ Baseline: above 1 is better for throughput, below 1 for latency,
// CPU and memory.
type Figure struct {
	Value    float64 `json:"value"`
	Baseline float64 `json:"baseline"`
	Ratio    float64 `json:"ratio"`
}

func figure(value, baseline float64) Figure {
	f := Figure{Value: value, Baseline: baseline}
	if baseline != 0 {
		f.Ratio = value / baseline
	}
	return f
}

// WebhookResults are the HTTP-level figures of the webhook.
type WebhookResults struct {
	// Baseline names the reference server.
	Baseline string `json:"baseline"`
	// ServerCPU and LoadCPU are the CPUs the servers and the load generator
	// were pinned to; -1 when the machine has a single CPU and nothing was
	// pinned.
	ServerCPU int            `json:"server_cpu"`
	LoadCPU   int            `json:"load_cpu"`
	Cells     []WebhookCell  `json:"cells"`
	Reviews   map[string]int `json:"server_counted_reviews"`
}

// WebhookCell is one payload at one concurrency, for both servers.
type WebhookCell struct {
	Payload      string    `json:"payload"`
	PayloadBytes int       `json:"payload_bytes"`
	Concurrency  int       `json:"concurrency"`
	Snatch       LoadStats `json:"snatch"`
	Generic      LoadStats `json:"generic"`

	ReviewsPerSecond Figure `json:"reviews_per_second"`
	P50Ms            Figure `json:"p50_ms"`
	P99Ms            Figure `json:"p99_ms"`
	P999Ms           Figure `json:"p99_9_ms"`
	CPUMsPerReview   Figure `json:"server_cpu_ms_per_review"`
	CPUSecondsPer10k Figure `json:"server_cpu_s_per_10k_reviews"`
	RSSMiB           Figure `json:"server_rss_mib"`
}

// LoadStats are what one load cell measured against one server.
type LoadStats struct {
	Reviews          int     `json:"reviews"`
	Errors           int     `json:"errors"`
	Seconds          float64 `json:"seconds"`
	ReviewsPerSecond float64 `json:"reviews_per_second"`
	P50Ms            float64 `json:"p50_ms"`
	P99Ms            float64 `json:"p99_ms"`
	P999Ms           float64 `json:"p99_9_ms"`
	MaxMs            float64 `json:"max_ms"`
	ServerCPUSeconds float64 `json:"server_cpu_seconds"`
	CPUMsPerReview   float64 `json:"server_cpu_ms_per_review"`
	CPUSecondsPer10k float64 `json:"server_cpu_s_per_10k_reviews"`
	// RSSMiB is the largest resident set seen during the cell.
	RSSMiB float64 `json:"server_rss_mib"`
	// LoadCPUShare is the load generator's CPU time over the wall time: near
	// 1 means the generator, not the server, was the limit.
	LoadCPUShare float64 `json:"load_generator_cpu_share"`
}

// HandlerResults are the Go benchmarks of pkg/admission.
type HandlerResults struct {
	Command string          `json:"command"`
	Rows    []HandlerBench  `json:"rows"`
	Compare []HandlerFigure `json:"compare"`
}

// HandlerBench is one line of go test -bench output.
type HandlerBench struct {
	Payload     string  `json:"payload"`
	Variant     string  `json:"variant"`
	Iterations  int     `json:"iterations"`
	NsPerOp     float64 `json:"ns_per_op"`
	BytesPerOp  float64 `json:"bytes_per_op"`
	AllocsPerOp float64 `json:"allocs_per_op"`
}

// HandlerFigure compares one of the project's variants with the generic
// handler on the same payload.
type HandlerFigure struct {
	Payload     string `json:"payload"`
	Variant     string `json:"variant"`
	NsPerOp     Figure `json:"ns_per_op"`
	BytesPerOp  Figure `json:"bytes_per_op"`
	AllocsPerOp Figure `json:"allocs_per_op"`
}

// APIServerResults are the Pod-create figures of the three arms.
type APIServerResults struct {
	// PolicyAPI is the group version the MutatingAdmissionPolicy was
	// created in, and APIServerArgs what kube-apiserver needed for it.
	PolicyAPI     string   `json:"policy_api"`
	APIServerArgs []string `json:"apiserver_args"`
	Creators      int      `json:"creators"`
	Rounds        int      `json:"rounds"`
	Order         []string `json:"round_order"`
	// DifferentialCases is how many Pods of the differential check came
	// out as the design says through both the webhook and the policy; any
	// other outcome fails the run.
	DifferentialCases int `json:"differential_cases"`

	A ArmStats `json:"a_no_mutation"`
	B ArmStats `json:"b_webhook"`
	C ArmStats `json:"c_policy"`

	BOverA Comparison `json:"b_over_a"`
	COverA Comparison `json:"c_over_a"`
	BOverC Comparison `json:"b_over_c"`
}

// ArmStats are one arm's Pod creations over all its rounds.
type ArmStats struct {
	Namespace     string  `json:"namespace"`
	Pods          int     `json:"pods"`
	Errors        int     `json:"errors"`
	Seconds       float64 `json:"seconds"`
	PodsPerSecond float64 `json:"pods_per_second"`
	P50Ms         float64 `json:"p50_ms"`
	P99Ms         float64 `json:"p99_ms"`
	MaxMs         float64 `json:"max_ms"`
	// WithTerm counts the created Pods that carry exactly the preferred
	// term; it must equal Pods in B and C and be 0 in A.
	WithTerm int `json:"pods_with_exactly_the_term"`
}

// Comparison is one arm over another.
type Comparison struct {
	PodsPerSecond Figure `json:"pods_per_second"`
	P50Ms         Figure `json:"p50_ms"`
	P99Ms         Figure `json:"p99_ms"`
}

func compare(x, base ArmStats) Comparison {
	return Comparison{
		PodsPerSecond: figure(x.PodsPerSecond, base.PodsPerSecond),
		P50Ms:         figure(x.P50Ms, base.P50Ms),
		P99Ms:         figure(x.P99Ms, base.P99Ms),
	}
}

// SyncerResults are the cabundle-syncer's figures.
type SyncerResults struct {
	Rotations int `json:"rotations"`
	// Samples of each latency: one per rotation.
	Samples int `json:"samples"`
	// PropagationP50Ms and P99Ms: Secret write → caBundle visible on every
	// webhook entry, against Secret write → the write seen by a plain watch
	// on the Secret.
	PropagationP50Ms Figure  `json:"propagation_p50_ms"`
	PropagationP99Ms Figure  `json:"propagation_p99_ms"`
	PropagationMaxMs float64 `json:"propagation_max_ms"`
	// RSSMiB with UnrelatedSecrets Secrets, against none.
	RSSMiB           Figure `json:"rss_mib"`
	UnrelatedSecrets int    `json:"unrelated_secrets"`
	SecretSize       int    `json:"secret_size_bytes"`
}

// CheckResults are the figures of `cabundle-syncer check` in a large
// cluster.
type CheckResults struct {
	Pods     int `json:"pods"`
	Nodes    int `json:"nodes"`
	KymaPods int `json:"kyma_pods"`
	Creators int `json:"creators"`
	Runs     int `json:"runs"`
	// Baseline names the baseline command.
	Baseline string `json:"baseline"`
	// NodesSeconds and CreateSeconds are how long creating the Nodes and
	// the Pods took.
	NodesSeconds        float64       `json:"nodes_seconds"`
	CreateSeconds       float64       `json:"create_seconds"`
	CreatePodsPerSecond float64       `json:"create_pods_per_second"`
	CheckRuns           []MeasuredRun `json:"check_runs"`
	BaselineRuns        []MeasuredRun `json:"baseline_runs"`
	// PeakRSSMiB is the largest over the runs, MedianSeconds the median
	// wall time, of check against the baseline.
	PeakRSSMiB    Figure `json:"peak_rss_mib"`
	MedianSeconds Figure `json:"median_seconds"`
	// MemoryLimitMiB is the check Job's limit in deploy/syncer/check.yaml.
	MemoryLimitMiB float64 `json:"job_memory_limit_mib"`
}

// MeasuredRun is one process run to its end.
type MeasuredRun struct {
	Seconds    float64 `json:"seconds"`
	CPUSeconds float64 `json:"cpu_seconds"`
	MaxRSSMiB  float64 `json:"max_rss_mib"`
	ExitCode   int     `json:"exit_code"`
}

// Target is a figure checked against the project's target.
type Target struct {
	Figure    string  `json:"figure"`
	Reference string  `json:"kim_snatch"`
	Target    string  `json:"target"`
	Measured  float64 `json:"measured"`
	Unit      string  `json:"unit"`
	Met       bool    `json:"met"`
	Source    string  `json:"source"`
}

// WriteJSON writes the results, indented, to path, creating its directory.
func (r *Results) WriteJSON(path string) error {
	b, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	return os.WriteFile(path, append(b, '\n'), 0o644)
}

// HostileResults are the webhook's legitimate load with hostile clients
// beside it (Hostile) and without them (Quiet), in one run.
type HostileResults struct {
	Payload     string `json:"payload"`
	Concurrency int    `json:"concurrency"`
	// ClaimConns claim a 32 MiB body and send nothing, SlowConns send the
	// largest review slowly, IdleConns send nothing after the handshake;
	// each opens its connection again when the webhook closes it.
	ClaimConns int       `json:"claim_conns"`
	SlowConns  int       `json:"slow_conns"`
	IdleConns  int       `json:"idle_conns"`
	GoMemLimit string    `json:"gomemlimit"`
	Quiet      LoadStats `json:"quiet"`
	Hostile    LoadStats `json:"hostile"`
	// RSSMiB and P99Ms are the hostile figures over the quiet ones.
	RSSMiB Figure `json:"server_rss_mib"`
	P99Ms  Figure `json:"p99_ms"`
}

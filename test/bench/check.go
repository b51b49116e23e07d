package bench

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/kyma-project/kim-snatch/pkg/affinity"
	"github.com/kyma-project/kim-snatch/pkg/check"
	"github.com/kyma-project/kim-snatch/test/bench/internal/command"
	"github.com/kyma-project/kim-snatch/test/framework"
	"github.com/kyma-project/kim-snatch/test/framework/objects"
	"github.com/kyma-project/kim-snatch/test/process"
	"github.com/kyma-project/kim-snatch/test/tools"
)

const checkBaseline = "unpaged-pods (test/bench/cmd/unpaged-pods): the Pod reads of check before they were paged, two unpaginated JSON lists and nothing else"

// The check section's cluster: a tenth of the Nodes in the Kyma pool, the
// Pods spread over every Node in turn, those on the Kyma pool in Kyma
// namespaces with the term, the others in customer namespaces.
const (
	checkNamespaces     = 10 // of each kind
	checkKymaNodeShare  = 10 // one Node in this many is in the Kyma pool
	checkKymaNamespace  = "bench-kyma-"
	checkOtherNamespace = "bench-customer-"
)

// checkJob is the CronJob of deploy/syncer/check.yaml: its memory limit is
// what the check's peak RSS is held against.
const checkJob = "kim-snatch-check"

// checkSection measures `cabundle-syncer check` against a control plane
// that holds tens of thousands of Pods: its peak RSS and wall time against
// the unpaginated Pod reads it once made (cmd/unpaged-pods).
func (r *runner) checkSection(ctx context.Context) (err error) {
	var bins checkBinaries
	if bins.syncer, err = process.Build(ctx, "cabundle-syncer", r.dir); err != nil {
		return err
	}
	if bins.baseline, err = buildCommand(ctx, r.dir, "unpaged-pods"); err != nil {
		return err
	}
	if bins.peakRSS, err = buildCommand(ctx, r.dir, "peak-rss"); err != nil {
		return err
	}
	limit, err := checkJobMemoryLimit()
	if err != nil {
		return err
	}
	cluster, cs, err := r.startControlPlane(ctx, framework.Options{})
	if err != nil {
		return err
	}

	res := &CheckResults{Pods: r.cfg.CheckPods, Nodes: r.cfg.CheckNodes, Creators: r.cfg.Creators, Runs: r.cfg.CheckRuns,
		Baseline: checkBaseline, MemoryLimitMiB: mib(limit)}
	kymaNodes, err := r.fillCheckCluster(ctx, cluster, cs, res)
	if err != nil {
		return err
	}
	for i := range r.cfg.CheckRuns {
		// The two take turns going first.
		order := []string{"check", "baseline"}
		if i%2 == 1 {
			slices.Reverse(order)
		}
		for _, which := range order {
			if err := r.measureCheck(ctx, bins, cluster.KubeconfigPath, which, i, kymaNodes, res); err != nil {
				return err
			}
		}
		r.progress("run %d/%d: check %.2f s, %.1f MiB; baseline %.2f s, %.1f MiB", i+1, r.cfg.CheckRuns,
			res.CheckRuns[i].Seconds, res.CheckRuns[i].MaxRSSMiB, res.BaselineRuns[i].Seconds, res.BaselineRuns[i].MaxRSSMiB)
	}
	peak, median := peakAndMedian(res.CheckRuns)
	basePeak, baseMedian := peakAndMedian(res.BaselineRuns)
	res.PeakRSSMiB, res.MedianSeconds = figure(peak, basePeak), figure(median, baseMedian)
	r.res.Check = res
	return nil
}

// checkBinaries are the programs the check section runs.
type checkBinaries struct{ syncer, baseline, peakRSS string }

// fillCheckCluster creates the section's Nodes, namespaces and bound Pods,
// records their times in res, and returns the number of Kyma Nodes.
func (r *runner) fillCheckCluster(ctx context.Context, cluster *framework.Cluster, cs kubernetes.Interface, res *CheckResults) (int, error) {
	start := time.Now()
	kymaNodes := max(1, r.cfg.CheckNodes/checkKymaNodeShare)
	kyma, err := cluster.CreateNodes(ctx, framework.KymaPool, kymaNodes)
	if err != nil {
		return 0, err
	}
	others, err := cluster.CreateNodes(ctx, framework.CustomerPool, r.cfg.CheckNodes-kymaNodes)
	if err != nil {
		return 0, err
	}
	res.NodesSeconds = time.Since(start).Seconds()
	for i := range checkNamespaces {
		for _, ns := range []*corev1.Namespace{
			{ObjectMeta: metav1.ObjectMeta{Name: checkKymaNamespace + strconv.Itoa(i), Labels: map[string]string{managedByLabel: "kyma"}}},
			{ObjectMeta: metav1.ObjectMeta{Name: checkOtherNamespace + strconv.Itoa(i)}},
		} {
			if _, err := cs.CoreV1().Namespaces().Create(ctx, ns, metav1.CreateOptions{}); err != nil {
				return 0, err
			}
		}
	}
	r.progress("%d Nodes (%d in %s) in %.1f s", r.cfg.CheckNodes, kymaNodes, framework.KymaPool, res.NodesSeconds)
	start = time.Now()
	res.KymaPods, err = createBoundPods(ctx, cs, append(kyma, others...), kymaNodes, r.cfg.CheckPods, r.cfg.Creators)
	if err != nil {
		return 0, err
	}
	res.CreateSeconds = time.Since(start).Seconds()
	res.CreatePodsPerSecond = float64(r.cfg.CheckPods) / res.CreateSeconds
	r.progress("%d Pods (%d Kyma Pods) created in %.1f s, %.0f Pods/s", r.cfg.CheckPods, res.KymaPods, res.CreateSeconds, res.CreatePodsPerSecond)
	return kymaNodes, nil
}

// measureCheck runs run i of the check or of the baseline (which) under
// peak-rss, checks what it read, and appends the run to res.
func (r *runner) measureCheck(ctx context.Context, bins checkBinaries, kubeconfig, which string, i, kymaNodes int, res *CheckResults) error {
	log := filepath.Join(r.dir, fmt.Sprintf("check-%s-%d.log", which, i))
	if which == "baseline" {
		run, out, err := runMeasured(ctx, bins.peakRSS, bins.baseline, []string{"--kubeconfig=" + kubeconfig}, log)
		if err != nil {
			return fmt.Errorf("baseline: %w", err)
		}
		if want := fmt.Sprintf("%d bound Pods, %d Pods", r.cfg.CheckPods, r.cfg.CheckPods); !strings.Contains(string(out), want) {
			return fmt.Errorf("baseline read %q, want %q", strings.TrimSpace(string(out)), want)
		}
		res.BaselineRuns = append(res.BaselineRuns, run)
		return nil
	}
	checkArgs := []string{"check", "--kubeconfig=" + kubeconfig, "-o", "json", "--timeout=5m"}
	run, out, err := runMeasured(ctx, bins.peakRSS, bins.syncer, checkArgs, log)
	if err != nil {
		return fmt.Errorf("check: %w", err)
	}
	if err := verifyCheckReport(out, res.KymaPods, kymaNodes); err != nil {
		return fmt.Errorf("check run %d: %w (log %s)", i, err, log)
	}
	res.CheckRuns = append(res.CheckRuns, run)
	return nil
}

// createBoundPods creates n Pods, bound through spec.nodeName to nodes in
// turn, with conc creators, and returns how many are Kyma Pods: those on
// the first kymaNodes Nodes, in Kyma namespaces and with the term.
func createBoundPods(ctx context.Context, cs kubernetes.Interface, nodes []corev1.Node, kymaNodes, n, conc int) (int, error) {
	term := affinity.DefaultPolicy().Term()
	errs := make(chan error, conc)
	forEach(ctx, n, conc, func(i int) {
		node := i % len(nodes)
		p := benchPod(fmt.Sprintf("p-%06d", i))
		p.Spec.NodeName = nodes[node].Name
		ns := checkOtherNamespace + strconv.Itoa(i%checkNamespaces)
		if node < kymaNodes {
			ns = checkKymaNamespace + strconv.Itoa(i%checkNamespaces)
			p.Spec.Affinity = &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{
				PreferredDuringSchedulingIgnoredDuringExecution: []corev1.PreferredSchedulingTerm{term},
			}}
		}
		if _, err := cs.CoreV1().Pods(ns).Create(ctx, p, metav1.CreateOptions{}); err != nil {
			select {
			case errs <- err:
			default:
			}
		}
	})
	kyma := n/len(nodes)*kymaNodes + min(n%len(nodes), kymaNodes)
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	select {
	case err := <-errs:
		return 0, fmt.Errorf("create Pods: %w", err)
	default:
		return kyma, nil
	}
}

// verifyCheckReport checks the two items that read every Pod: placement
// counted every Kyma Pod, all on the pool, and kyma-pool found the pool.
func verifyCheckReport(out []byte, kymaPods, kymaNodes int) error {
	var report check.Report
	if err := json.Unmarshal(out, &report); err != nil {
		return fmt.Errorf("decode the report: %w; output %q", err, out)
	}
	want := map[string]string{
		check.IDPlacement: fmt.Sprintf("%d Kyma Pods in %d namespaces; all carry the term", kymaPods, checkNamespaces),
		check.IDKymaPool:  fmt.Sprintf("%d Nodes, %d Ready and schedulable", kymaNodes, kymaNodes),
	}
	var errs []error
	for _, c := range report.Checks {
		if w, ok := want[c.ID]; ok {
			if c.Status != check.StatusPass || !strings.Contains(c.Message, w) {
				errs = append(errs, fmt.Errorf("%s: %s %q, want PASS with %q", c.ID, c.Status, c.Message, w))
			}
			delete(want, c.ID)
		}
	}
	for id := range want {
		errs = append(errs, fmt.Errorf("%s: not in the report", id))
	}
	return errors.Join(errs...)
}

// runMeasured runs a command to its end under peak-rss and returns its
// wall time, CPU time and peak resident set as the kernel counted them,
// and its stdout; stderr goes to logPath. An exit code other than 0 is
// not an error here.
func runMeasured(ctx context.Context, peakRSS, path string, args []string, logPath string) (MeasuredRun, []byte, error) {
	logFile, err := os.Create(logPath)
	if err != nil {
		return MeasuredRun{}, nil, err
	}
	defer func() { _ = logFile.Close() }()
	usagePath := logPath + ".usage.json"
	var stdout bytes.Buffer
	cmd := exec.CommandContext(ctx, peakRSS, append([]string{"-o", usagePath, "--", path}, args...)...)
	cmd.Stdout, cmd.Stderr = &stdout, logFile
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Run(); err != nil && !errors.As(err, new(*exec.ExitError)) {
		return MeasuredRun{}, nil, err
	}
	b, err := os.ReadFile(usagePath)
	if err != nil {
		return MeasuredRun{}, nil, fmt.Errorf("%s wrote no usage: %w; log %s", filepath.Base(path), err, logPath)
	}
	var u command.Usage
	if err := json.Unmarshal(b, &u); err != nil {
		return MeasuredRun{}, nil, fmt.Errorf("%s: %w", usagePath, err)
	}
	return MeasuredRun{Seconds: u.Seconds, CPUSeconds: u.CPUSeconds, MaxRSSMiB: float64(u.MaxRSSKiB) / 1024, ExitCode: u.ExitCode}, stdout.Bytes(), nil
}

// checkJobMemoryLimit reads the check container's memory limit from
// deploy/syncer/check.yaml, the one place it is set.
func checkJobMemoryLimit() (int64, error) {
	root, err := tools.RepoRoot()
	if err != nil {
		return 0, err
	}
	path := filepath.Join(root, "deploy", "syncer", "check.yaml")
	data, err := os.ReadFile(path)
	if err != nil {
		return 0, err
	}
	objs, err := objects.Decode(data)
	if err != nil {
		return 0, fmt.Errorf("%s: %w", path, err)
	}
	for _, u := range objects.OfKind(objs, "CronJob") {
		var job batchv1.CronJob
		if err := objects.Into(u, &job); err != nil {
			return 0, fmt.Errorf("%s: %w", path, err)
		}
		if job.Name != checkJob {
			continue
		}
		for _, c := range job.Spec.JobTemplate.Spec.Template.Spec.Containers {
			if q, ok := c.Resources.Limits[corev1.ResourceMemory]; ok {
				return q.Value(), nil
			}
		}
	}
	return 0, fmt.Errorf("%s: no memory limit on CronJob %s", path, checkJob)
}

// peakAndMedian are the largest peak RSS and the median wall time of runs.
func peakAndMedian(runs []MeasuredRun) (peakRSSMiB, medianSeconds float64) {
	var secs []float64
	for _, r := range runs {
		peakRSSMiB = max(peakRSSMiB, r.MaxRSSMiB)
		secs = append(secs, r.Seconds)
	}
	slices.Sort(secs)
	return peakRSSMiB, secs[len(secs)/2]
}

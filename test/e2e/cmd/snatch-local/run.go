package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"time"

	"k8s.io/client-go/dynamic"

	"github.com/kyma-project/kim-snatch/test/e2e/stack"
	"github.com/kyma-project/kim-snatch/test/framework"
	"github.com/kyma-project/kim-snatch/test/realnode"
	"github.com/kyma-project/kim-snatch/test/tools"
)

// overlay is how deploy/ is installed here, as the end-to-end suite does.
const overlay = "test/e2e/overlay"

// run brings everything up, shows the demo and waits for ctx to end, then
// tears everything down.
func run(ctx context.Context, o Options, out io.Writer) error {
	sess, err := start(ctx, o, out)
	if err != nil {
		return err
	}
	<-ctx.Done()
	fmt.Fprintln(out)
	sess.progress("signal received: stopping the node and the control plane")
	return sess.close()
}

// session is a running cluster with KIM Snatch installed and the demo
// deployed.
type session struct {
	cluster *realnode.Cluster
	rows    []Row
	out     io.Writer
	begin   time.Time
}

// progress prints one line prefixed with the time since start, so that a
// slow step (a first build, a busy machine) shows where the time went.
func (s *session) progress(format string, args ...any) {
	fmt.Fprintf(s.out, "[%6.1fs] %s\n", time.Since(s.begin).Seconds(), fmt.Sprintf(format, args...))
}

// start starts the cluster, installs deploy/, deploys the demo and prints
// the table and the ways to look further. On error nothing it started is
// left running.
func start(ctx context.Context, o Options, out io.Writer) (_ *session, err error) {
	s := &session{out: out, begin: time.Now()}
	fmt.Fprintf(out, "%s: KIM Snatch from deploy/ on a real node beside a local Kubernetes %s control plane\n", binaryName, tools.KubernetesVersion)
	s.cluster, err = realnode.StartCluster(ctx, realnode.ClusterOptions{
		Images:    append([]string{"snatch-webhook.tar", "cabundle-syncer.tar"}, stack.NeighbourImages...),
		KymaNodes: 2, CustomerNodes: 2,
		Progress: s.progress,
	})
	if err != nil {
		if ctx.Err() != nil {
			return nil, fmt.Errorf("interrupted while starting: %w", err)
		}
		return nil, fmt.Errorf("start the cluster (set %s=1 to keep the control plane's logs): %w", framework.KeepEnv, err)
	}
	defer func() {
		if err != nil {
			err = errors.Join(err, s.close())
		}
	}()
	if err = s.install(ctx); err != nil {
		return s, err
	}
	namespaces := demoNamespaces(o)
	if s.rows, err = deployDemo(ctx, s.cluster.Clientset, namespaces, s.progress); err != nil {
		return s, err
	}
	s.progress("all %d Pods bound", len(s.rows))
	s.report(namespaces)
	return s, nil
}

// install installs the neighbours (the CRDs and Gardener
// cert-management), applies deploy/ through the overlay, and waits until
// cert-management has written the certificate Secret, both Deployments
// are rolled out, the caBundle holds the CA and the API server calls the
// webhook.
func (s *session) install(ctx context.Context) error {
	s.progress("installing Gardener cert-management and the CRDs")
	if err := stack.InstallNeighbours(ctx, s.cluster.KubeconfigPath); err != nil {
		return err
	}
	s.progress("applying deploy/ through %s", overlay)
	if err := s.cluster.Apply(ctx, overlay); err != nil {
		return err
	}
	cs := s.cluster.Clientset
	dyn, err := dynamic.NewForConfig(s.cluster.Config)
	if err != nil {
		return err
	}
	fp, err := stack.WaitIssued(ctx, cs, dyn, s.progress)
	if err != nil {
		return err
	}
	s.progress("cert-management issued Secret %s/%s, CA %s", stack.Namespace, stack.SecretName, fp[:16])
	for _, d := range []string{stack.WebhookName, stack.SyncerName} {
		if _, err := stack.Kubectl(ctx, s.cluster.KubeconfigPath, "-n", stack.Namespace, "rollout", "status", "deployment/"+d, "--timeout=5m"); err != nil {
			return err
		}
	}
	if err := stack.WaitBundleHas(ctx, cs, 2*time.Minute, fp); err != nil {
		return err
	}
	if err := stack.WaitAdmits(ctx, cs, 2*time.Minute); err != nil {
		return err
	}
	s.progress("installed: both Deployments rolled out, caBundle written, the API server calls the webhook")
	return nil
}

// report prints the table, what it means and where to look further.
func (s *session) report(namespaces []demoNamespace) {
	out := s.out
	fmt.Fprintln(out)
	_ = writeTable(out, s.rows)
	fmt.Fprintln(out)

	managed := map[string]bool{}
	for _, ns := range namespaces {
		managed[ns.name] = ns.managed
	}
	lines, problems := summarize(s.rows, managed)
	for _, l := range lines {
		fmt.Fprintln(out, l)
	}
	if len(problems) == 0 {
		fmt.Fprintf(out, "As expected: every Pod in %s carries the preferred term for %s=%s, no Pod in %s does.\n",
			kymaNamespace, framework.PoolLabel, framework.KymaPool, customerNamespace)
	} else {
		fmt.Fprintln(out, "NOT as expected (see the snatch-webhook logs below):")
		for _, p := range problems {
			fmt.Fprintln(out, "  "+p)
		}
	}
	fmt.Fprintf(out, `The term is a preference, not a rule: with no room left in %s, Kyma Pods
go to other pools. kube-scheduler bound every demo Pod (NODE) to a Node
without a kubelet, so they stay Pending; KIM Snatch itself runs in
containers on the real node %s.
`, framework.KymaPool, realnode.SystemNodeName)
	s.writeHints()
}

// writeHints prints how to reach the cluster and where the logs are.
func (s *session) writeHints() {
	kubectl, err := framework.Kubectl()
	if err != nil {
		kubectl = "kubectl"
	}
	root, _ := tools.RepoRoot()
	fmt.Fprintf(s.out, `
In another shell:
  export KUBECONFIG=%[1]s
  %[2]s get nodes -L %[3]s
  %[2]s get pods -A -o wide
  %[2]s -n %[4]s run try --image=%[5]s --dry-run=server -o jsonpath='{.spec.affinity}{"\n"}'
  %[2]s -n %[6]s logs deployment/%[7]s
  %[2]s -n %[6]s get lease %[8]s
  %[9]s check --target-namespace %[4]s

Logs: %[2]s logs, and the node's components in %[10]s; the control plane's in %[11]s.
Running until Ctrl-C (SIGINT) or SIGTERM, which stops everything and leaves the host as it found it.
`, s.cluster.KubeconfigPath, kubectl, framework.PoolLabel, kymaNamespace, stack.PauseImage, stack.Namespace, stack.WebhookName,
		stack.LeaseName, filepath.Join(root, "bin", "images", "build", stack.SyncerName), s.cluster.Node.LogDir(), s.cluster.Dir)
}

// close stops the cluster; it fails if the host is not as the node found
// it.
func (s *session) close() error {
	if err := s.cluster.Stop(); err != nil {
		return err
	}
	s.progress("stopped")
	return nil
}

package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"text/tabwriter"
	"time"

	discoveryv1 "k8s.io/api/discovery/v1"

	"github.com/kyma-project/kim-snatch/test/e2e/stack"
	"github.com/kyma-project/kim-snatch/test/framework"
)

// run brings everything up, shows the demo and waits for ctx to end, then
// tears everything down.
func run(ctx context.Context, o Options, out io.Writer) error {
	sess, err := start(ctx, o, out)
	if err != nil {
		return err
	}
	<-ctx.Done()
	fmt.Fprintln(out)
	sess.progress("signal received: stopping the replicas and the control plane (Ctrl-C again quits at once, leaving the directories)")
	return sess.close()
}

// session is a running stack with the demo deployed.
type session struct {
	stack *stack.Stack
	// dir is Options.Dir or the temporary directory that replaces it;
	// ownDir says which, and so whether close removes it.
	dir    string
	ownDir bool
	rows   []Row
	out    io.Writer
	begin  time.Time
}

// progress prints one line prefixed with the time since start, so that a
// slow step (a first build, a busy machine) shows where the time went.
func (s *session) progress(format string, args ...any) {
	fmt.Fprintf(s.out, "[%6.1fs] %s\n", time.Since(s.begin).Seconds(), fmt.Sprintf(format, args...))
}

// start starts the stack, deploys the demo and prints the table and the
// ways to look further. On error nothing it started is left running.
func start(ctx context.Context, o Options, out io.Writer) (_ *session, err error) {
	s := &session{dir: o.Dir, out: out, begin: time.Now()}
	if s.dir == "" {
		if s.dir, err = os.MkdirTemp("", "snatch-local-"); err != nil {
			return nil, err
		}
		s.ownDir = true
	} else if err = os.MkdirAll(s.dir, 0o755); err != nil {
		return nil, err
	}
	fmt.Fprintf(out, "%s: KIM Snatch on a local Kubernetes %s cluster; binaries, certificates and logs in %s\n", binaryName, framework.KubernetesVersion, s.dir)

	s.stack, err = stack.Start(ctx, stack.Options{Dir: s.dir, ProjectorDelay: o.ProjectorDelay, Progress: s.progress})
	if err != nil {
		// stack.Start has stopped what it started, and a replica that
		// failed to get ready put its last log lines into err.
		if rerr := s.removeDir(); rerr != nil {
			err = errors.Join(err, rerr)
		}
		if ctx.Err() != nil {
			return nil, fmt.Errorf("interrupted while starting: %w", err)
		}
		return nil, fmt.Errorf("start the local stack (set %s=1 to keep its logs): %w", framework.KeepEnv, err)
	}
	defer func() {
		if err != nil {
			err = errors.Join(err, s.close())
		}
	}()
	s.progress("stack ready: %d snatch-webhook and %d cabundle-syncer replicas, caBundle written", len(s.stack.Webhooks), len(s.stack.Syncers))

	namespaces := demoNamespaces(o)
	if s.rows, err = deployDemo(ctx, s.stack.Clientset, namespaces, s.progress); err != nil {
		return s, err
	}
	s.progress("all %d Pods bound", len(s.rows))
	s.report(namespaces)
	return s, nil
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
go to other pools. kube-scheduler bound every Pod (NODE), but no kubelet and
no container engine run here, so the Pods never start and stay Pending.
`, framework.KymaPool)

	s.writeHints()
}

// writeHints prints how to reach the cluster and where the logs are.
func (s *session) writeHints() {
	out := s.out
	kubectl, err := framework.Kubectl()
	if err != nil {
		kubectl = "kubectl"
	}
	c := s.stack.Cluster
	fmt.Fprintf(out, `
In another shell:
  export KUBECONFIG=%[1]s
  %[2]s get nodes -L %[3]s
  %[2]s get pods -A -o wide
  %[2]s -n %[4]s run try --image=%[5]s --dry-run=server -o jsonpath='{.spec.affinity}{"\n"}'
  %[2]s -n %[6]s get lease %[7]s
  %[2]s -n %[6]s get endpointslices -l %[9]s=%[10]s
  %[8]s check --target-namespace %[4]s

Logs:
`, c.KubeconfigPath, kubectl, framework.PoolLabel, kymaNamespace, stack.PauseImage, stack.Namespace, stack.LeaseName,
		filepath.Join(s.dir, "bin", stack.SyncerName), discoveryv1.LabelServiceName, stack.ServiceName)
	tw := tabwriter.NewWriter(out, 0, 0, 2, ' ', 0)
	for _, r := range append(append([]*stack.Replica(nil), s.stack.Webhooks...), s.stack.Syncers...) {
		fmt.Fprintf(tw, "  %s\t%s\n", r.Name, r.Process().LogPath)
	}
	fmt.Fprintf(tw, "  %s\t%s/{etcd,kube-apiserver,kube-scheduler,kube-controller-manager}.log\n", "control plane", c.Dir)
	_ = tw.Flush()

	keep := "removes both directories"
	switch {
	case os.Getenv(framework.KeepEnv) != "":
		keep = fmt.Sprintf("keeps both directories (%s is set)", framework.KeepEnv)
	case !s.ownDir:
		keep = fmt.Sprintf("keeps %s (given with --dir) and removes %s", s.dir, c.Dir)
	}
	fmt.Fprintf(out, "\nRunning until Ctrl-C (SIGINT) or SIGTERM, which stops everything and %s.\n", keep)
}

// close stops the stack and removes the directory if it is a temporary
// one and SNATCH_KEEP_CLUSTER is unset; framework.Cluster.Stop decides the
// same for the control plane's directory.
func (s *session) close() error {
	s.stack.Stop()
	if err := s.removeDir(); err != nil {
		return err
	}
	switch {
	case os.Getenv(framework.KeepEnv) != "":
		s.progress("stopped; kept %s and %s", s.dir, s.stack.Cluster.Dir)
	case !s.ownDir:
		s.progress("stopped; removed %s, kept %s", s.stack.Cluster.Dir, s.dir)
	default:
		s.progress("stopped; removed %s and %s", s.dir, s.stack.Cluster.Dir)
	}
	return nil
}

func (s *session) removeDir() error {
	if !s.ownDir || os.Getenv(framework.KeepEnv) != "" {
		return nil
	}
	if err := os.RemoveAll(s.dir); err != nil {
		return fmt.Errorf("remove %s: %w", s.dir, err)
	}
	return nil
}

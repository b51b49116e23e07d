// Command unpaged-pods is the baseline of the check benchmark: the Pod
// reads of `cabundle-syncer check` before they were paged. kyma-pool
// listed every bound, unfinished Pod and placement every Pod, each in one
// unpaginated JSON list decoded into a typed PodList. It makes the same two
// lists, one after the other, with the check's client settings and
// nothing else, so its peak RSS is what those reads alone cost.
package main

import (
	"context"
	"flag"
	"fmt"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/kyma-project/kim-snatch/test/bench/internal/command"
)

var (
	flags      = flag.NewFlagSet("unpaged-pods", flag.ContinueOnError)
	kubeconfig = flags.String("kubeconfig", "", "Path to the kubeconfig.")
	timeout    = flags.Duration("timeout", 5*time.Minute, "Time limit of each request.")
)

func main() { command.Main(flags, run) }

func run(ctx context.Context) error {
	cfg, err := clientcmd.BuildConfigFromFlags("", *kubeconfig)
	if err != nil {
		return err
	}
	// cabundle-syncer's client: 20 requests per second, a burst of 30, JSON.
	cfg.QPS, cfg.Burst, cfg.Timeout = 20, 30, *timeout
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return err
	}
	// Each list is garbage once counted, as each item's was once judged.
	count := func(opts metav1.ListOptions) (int, error) {
		list, err := cs.CoreV1().Pods("").List(ctx, opts)
		if err != nil {
			return 0, err
		}
		return len(list.Items), nil
	}
	bound, err := count(metav1.ListOptions{FieldSelector: "spec.nodeName!=,status.phase!=Succeeded,status.phase!=Failed"})
	if err != nil {
		return fmt.Errorf("list the bound Pods: %w", err)
	}
	all, err := count(metav1.ListOptions{})
	if err != nil {
		return fmt.Errorf("list every Pod: %w", err)
	}
	fmt.Printf("%d bound Pods, %d Pods\n", bound, all)
	return nil
}

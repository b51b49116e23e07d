package e2e

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kyma-project/kim-snatch/test/e2e/stack"
	"github.com/kyma-project/kim-snatch/test/framework/poll"
)

// freezerRoot is the host's cgroup v1 freezer hierarchy, where the node's
// kubelet (cgroupfs driver on cgroup v1, test/realnode/files.go) puts each
// Pod's cgroup.
const freezerRoot = "/sys/fs/cgroup/freezer"

// freezeWebhooks freezes every webhook Pod on this host with the cgroup
// freezer of its Pod cgroup, until thaw. t's cleanup thaws too; a second
// thaw does nothing.
//
// The kernel freezes every process in the Pod cgroup, and every process
// that enters it later: a container the kubelet starts after the liveness
// probe has given up is frozen before it runs its first instruction, so a
// freeze holds for as long as it lasts, however busy the host. The
// kernel still accepts connections on the replicas' sockets. A kill of a
// frozen container waits for the thaw, so the kubelet restarts nothing
// meanwhile.
func freezeWebhooks(t *testing.T) (thaw func()) {
	t.Helper()
	var pods []string
	for _, pid := range processesOf("/" + stack.WebhookName) {
		dir, err := podFreezer(pid)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Contains(pods, dir) {
			pods = append(pods, dir)
		}
	}
	if len(pods) != sys.WebhookReplicas() {
		t.Fatalf("%d webhook Pods on this host (%v), want %d", len(pods), pods, sys.WebhookReplicas())
	}
	thaw = sync.OnceFunc(func() {
		for _, dir := range pods {
			if err := setFreezer(dir, "THAWED"); err != nil {
				t.Error(err)
			}
		}
	})
	t.Cleanup(thaw)
	for _, dir := range pods {
		if err := setFreezer(dir, "FROZEN"); err != nil {
			t.Fatal(err)
		}
	}
	// FREEZING until every task has stopped.
	poll.Eventually(t, fmt.Sprintf("the webhook Pods' cgroups %v FROZEN", pods), func(context.Context) error {
		for _, dir := range pods {
			b, err := os.ReadFile(filepath.Join(dir, "freezer.state"))
			if err != nil {
				return err
			}
			if state := strings.TrimSpace(string(b)); state != "FROZEN" {
				return fmt.Errorf("%s is %s", dir, state)
			}
		}
		return nil
	}, poll.Timeout(30*time.Second))
	return thaw
}

// podFreezer returns the freezer cgroup of the Pod that the process runs
// in: the parent of its container's, as the kubelet lays them out
// (kubepods/<QoS class>/pod<UID>/<container ID>).
func podFreezer(pid string) (string, error) {
	b, err := os.ReadFile(filepath.Join("/proc", pid, "cgroup"))
	if err != nil {
		return "", err
	}
	for l := range strings.Lines(string(b)) {
		// hierarchy-ID:controller-list:cgroup-path
		f := strings.SplitN(strings.TrimSpace(l), ":", 3)
		if len(f) != 3 || !slices.Contains(strings.Split(f[1], ","), "freezer") {
			continue
		}
		pod := filepath.Dir(f[2])
		if !strings.HasPrefix(filepath.Base(pod), "pod") {
			return "", fmt.Errorf("process %s: freezer cgroup %s is not in a Pod's cgroup", pid, f[2])
		}
		return filepath.Join(freezerRoot, pod), nil
	}
	return "", fmt.Errorf("process %s is in no cgroup v1 freezer hierarchy:\n%s", pid, b)
}

// setFreezer writes state (FROZEN or THAWED) to a freezer cgroup.
func setFreezer(dir, state string) error {
	if err := os.WriteFile(filepath.Join(dir, "freezer.state"), []byte(state), 0); err != nil {
		return fmt.Errorf("%s of %s: %w", state, dir, err)
	}
	return nil
}

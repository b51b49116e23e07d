package e2e

import (
	"github.com/kyma-project/kim-snatch/test/framework"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kyma-project/kim-snatch/test/e2e/stack"
)

// The local images hold nothing but the binary: no passwd, no CA bundle
// (test/manifests holds them to the Dockerfiles). On the real node each
// binary runs from its image as the manifests ask: as user 65532, on a
// read-only root filesystem, and is ready. This reads what the kernel
// says of the containers' processes, not what the Pod spec asks for.
func TestImagesRunAsNonRootOnAReadOnlyRoot(t *testing.T) {
	framework.InTier(t, framework.Smoke, "the images as shipped, under the restricted profile, once")
	framework.Shares(t)
	requireNode(t, "the containers' processes are not on this host")
	for _, bin := range []string{stack.WebhookName, stack.SyncerName} {
		pids := processesOf("/" + bin)
		if len(pids) == 0 {
			t.Errorf("no process runs /%s on this host", bin)
		}
		for _, pid := range pids {
			status, err := os.ReadFile(filepath.Join("/proc", pid, "status"))
			if err != nil {
				t.Fatal(err)
			}
			if uid := procField(string(status), "Uid:"); uid != "65532 65532 65532 65532" {
				t.Errorf("%s (pid %s) runs with uids %q, want 65532", bin, pid, uid)
			}
			mounts, err := os.ReadFile(filepath.Join("/proc", pid, "mountinfo"))
			if err != nil {
				t.Fatal(err)
			}
			if opts := rootMountOptions(string(mounts)); !strings.HasPrefix(opts, "ro") {
				t.Errorf("%s (pid %s) has its root mounted %q, want read-only", bin, pid, opts)
			}
		}
		logf("%s: %d processes from the local image, as uid 65532 on a read-only root", bin, len(pids))
	}
}

// processesOf returns the PIDs whose command is path.
func processesOf(path string) []string {
	var pids []string
	entries, _ := filepath.Glob("/proc/[0-9]*/cmdline")
	for _, e := range entries {
		b, err := os.ReadFile(e)
		if err == nil && strings.SplitN(string(b), "\x00", 2)[0] == path {
			pids = append(pids, strings.Split(e, "/")[2])
		}
	}
	return pids
}

// procField returns the value of a /proc/<pid>/status field, with its
// whitespace folded.
func procField(status, key string) string {
	for l := range strings.Lines(status) {
		if rest, ok := strings.CutPrefix(l, key); ok {
			return strings.Join(strings.Fields(rest), " ")
		}
	}
	return ""
}

// rootMountOptions returns the per-mount options of the mount at "/" in a
// process's mountinfo.
func rootMountOptions(mountinfo string) string {
	for l := range strings.Lines(mountinfo) {
		if f := strings.Fields(l); len(f) > 5 && f[4] == "/" {
			return f[5]
		}
	}
	return ""
}

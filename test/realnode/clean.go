package realnode

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"
)

// Clean removes what a node in stateDir left on the host, whether it was
// stopped or killed, and puts back what the node changed, as recorded
// before it started. It is safe to run twice, and with nothing to clean;
// it waits while a node runs. It returns the differences that remain from
// the recorded state.
func Clean(stateDir, binDir string) (string, error) {
	l, err := lock(lockPath)
	if err != nil {
		return "", err
	}
	diff, err := clean(stateDir, binDir)
	return diff, errors.Join(err, l.Close())
}

func clean(stateDir, binDir string) (string, error) {
	before, ok := recorded(stateDir)
	if _, err := os.Stat(stateDir); errors.Is(err, os.ErrNotExist) {
		return "", nil
	}
	var errs []error
	note := func(err error) { errs = append(errs, err) }

	note(removeContainers(stateDir))
	killLeftovers(stateDir)
	note(unmountBelow(stateDir, "/var/lib/kubelet", "/run/containerd"))
	removeNetworkPolicyRules()
	note(removeRules(stateDir, binDir, before))
	for _, l := range []string{PodBridge, ContainDevice} {
		if _, err := os.Stat("/sys/class/net/" + l); err == nil {
			_, err = run("ip", "link", "del", l)
			note(err)
		}
	}
	if ok {
		for k, v := range before.Sysctls {
			note(os.WriteFile("/proc/sys/"+k, []byte(v+"\n"), 0o644))
		}
	}
	note(removeCgroups(before))
	for _, p := range fixedPaths {
		if !ok || !slices.Contains(before.Paths, p) {
			note(os.RemoveAll(p))
		}
	}
	note(os.RemoveAll(stateDir))
	if !ok {
		return "", errors.Join(errs...)
	}
	after, err := ReadHostState(stateDir)
	note(err)
	return after.Diff(before), errors.Join(errs...)
}

// removeContainers has runc kill and delete every container of the node,
// so that none outlives its shim.
func removeContainers(stateDir string) error {
	root := filepath.Join(stateDir, "runc", "k8s.io")
	entries, err := os.ReadDir(root)
	if err != nil {
		return nil //nolint:nilerr // no runc state: no container
	}
	var errs []error
	for _, e := range entries {
		if _, err := run("runc", "--root", root, "delete", "--force", e.Name()); err != nil && !strings.Contains(err.Error(), "does not exist") {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// killLeftovers SIGKILLs every process whose command line names stateDir
// (components and shims) and waits until they are gone.
func killLeftovers(stateDir string) {
	for range 50 {
		pids, _ := leftovers(stateDir)
		if len(pids) == 0 {
			return
		}
		for _, pid := range pids {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// unmountBelow unmounts every mount point below the given folders,
// deepest first.
func unmountBelow(dirs ...string) error {
	var points []string
	for _, m := range mounts() {
		for _, d := range dirs {
			if m == d || strings.HasPrefix(m, d+"/") {
				points = append(points, m)
			}
		}
	}
	slices.Sort(points)
	slices.Reverse(points)
	var errs []error
	for _, m := range slices.Compact(points) {
		if err := syscall.Unmount(m, 0); err != nil && !errors.Is(err, syscall.EINVAL) {
			if err := syscall.Unmount(m, syscall.MNT_DETACH); err != nil {
				errs = append(errs, fmt.Errorf("unmount %s: %w", m, err))
			}
		}
	}
	return errors.Join(errs...)
}

// removeRules removes kube-proxy's rules with its own --cleanup, the
// chains the kubelet creates for itself, and every nft table that was not
// there before and is now empty of rules.
func removeRules(stateDir, binDir string, before HostState) error {
	var errs []error
	if proxy := filepath.Join(binDir, "kube-proxy"); fileExists(proxy) {
		if _, err := run(proxy, "--cleanup", "--config="+filepath.Join(stateDir, "kube-proxy.yaml")); err != nil && fileExists(filepath.Join(stateDir, "kube-proxy.yaml")) {
			errs = append(errs, err)
		}
	}
	for _, ipt := range []string{"iptables", "ip6tables"} {
		// Each may be absent; an error only says so.
		_, _ = run(ipt, "-D", "INPUT", "-j", "KUBE-FIREWALL")
		_, _ = run(ipt, "-D", "OUTPUT", "-j", "KUBE-FIREWALL")
		_, _ = run(ipt, "-F", "KUBE-FIREWALL")
		_, _ = run(ipt, "-X", "KUBE-FIREWALL")
		for _, t := range []string{"filter", "nat", "mangle"} {
			_, _ = run(ipt, "-t", t, "-X", "KUBE-KUBELET-CANARY")
		}
		_, _ = run(ipt, "-t", "mangle", "-X", "KUBE-IPTABLES-HINT")
	}
	for _, table := range newTables(before) {
		if out, err := run("nft", "-j", "list", "table", table[0], table[1]); err == nil && !strings.Contains(out, `"rule"`) {
			if _, err := run("nft", "delete", "table", table[0], table[1]); err != nil {
				errs = append(errs, err)
			}
		}
	}
	return errors.Join(errs...)
}

// newTables returns the family and name of each nft table that was not in
// before.
func newTables(before HostState) [][2]string {
	out, _ := run("nft", "list", "tables")
	var tables [][2]string
	for _, l := range nonEmpty(out) {
		f := strings.Fields(l) // table <family> <name>
		if len(f) == 3 && !slices.Contains(before.Rules, fmt.Sprintf("table %s %s {", f[1], f[2])) {
			tables = append(tables, [2]string{f[1], f[2]})
		}
	}
	return tables
}

// removeCgroups removes the groups the kubelet created, deepest first.
func removeCgroups(before HostState) error {
	var errs []error
	for _, g := range cgroups() {
		if slices.Contains(before.Cgroups, g) || !strings.Contains(filepath.Base(g), "kubepods") {
			continue
		}
		var dirs []string
		_ = filepath.WalkDir(g, func(p string, d os.DirEntry, err error) error {
			if err == nil && d.IsDir() {
				dirs = append(dirs, p)
			}
			return nil
		})
		slices.Reverse(dirs)
		for _, d := range dirs {
			if err := os.Remove(d); err != nil {
				errs = append(errs, err)
			}
		}
	}
	return errors.Join(errs...)
}

func fileExists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

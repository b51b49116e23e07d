package realnode

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"github.com/kyma-project/kim-snatch/test/process"
)

// fixedPaths are created by the kubelet, containerd and the CNI plugins
// whatever their folder flags say.
var fixedPaths = []string{"/var/lib/kubelet", "/var/log/containers", "/run/containerd", "/var/lib/cni"}

// sysctls are the host settings a node changes: the kubelet's kernel
// tunables (it sets them unless protectKernelDefaults), kube-proxy's and
// the CNI bridge's forwarding.
var sysctls = []string{
	"net/ipv4/ip_forward",
	"net/ipv6/conf/all/forwarding",
	"net/ipv4/conf/all/route_localnet",
	"net/bridge/bridge-nf-call-iptables",
	"net/bridge/bridge-nf-call-ip6tables",
	"vm/overcommit_memory",
	"vm/panic_on_oom",
	"kernel/panic",
	"kernel/panic_on_oops",
	"kernel/keys/root_maxkeys",
	"kernel/keys/root_maxbytes",
}

// HostState is what a node may change on the host, as text that compares.
type HostState struct {
	Links    []string          `json:"links"`
	Routes   []string          `json:"routes"`
	Rules    []string          `json:"rules"`
	Mounts   []string          `json:"mounts"`
	Cgroups  []string          `json:"cgroups"`
	Sysctls  map[string]string `json:"sysctls"`
	Paths    []string          `json:"paths"`
	Children []string          `json:"processes"`
}

// ReadHostState reads the host's state now.
func ReadHostState(stateDir string) (HostState, error) {
	var s HostState
	var errs []error
	lines := func(args ...string) []string {
		out, err := run(args...)
		errs = append(errs, err)
		return nonEmpty(out)
	}
	s.Links = lines("ip", "-o", "-br", "link", "show")
	for i, l := range s.Links { // name and kind only: flags and state change
		s.Links[i] = strings.Fields(l)[0]
	}
	s.Routes = append(lines("ip", "route", "show", "table", "all"), lines("ip", "-6", "route", "show", "table", "all")...)
	s.Rules = ruleset(lines("nft", "list", "ruleset"))
	s.Mounts = mounts()
	s.Cgroups = cgroups()
	s.Sysctls = map[string]string{}
	for _, k := range sysctls {
		if b, err := os.ReadFile("/proc/sys/" + k); err == nil {
			s.Sysctls[k] = strings.TrimSpace(string(b))
		}
	}
	for _, p := range fixedPaths {
		if _, err := os.Lstat(p); err == nil {
			s.Paths = append(s.Paths, p)
		}
	}
	_, s.Children = leftovers(stateDir)
	return s, errors.Join(errs...)
}

// Diff describes each way in which s differs from before, or returns "".
func (s HostState) Diff(before HostState) string {
	var b strings.Builder
	list := func(what string, was, is []string) {
		for _, x := range is {
			if !slices.Contains(was, x) {
				fmt.Fprintf(&b, "%s added: %s\n", what, x)
			}
		}
		for _, x := range was {
			if !slices.Contains(is, x) {
				fmt.Fprintf(&b, "%s removed: %s\n", what, x)
			}
		}
	}
	list("link", before.Links, s.Links)
	list("route", before.Routes, s.Routes)
	list("nft/iptables rule", before.Rules, s.Rules)
	list("mount", before.Mounts, s.Mounts)
	list("cgroup", before.Cgroups, s.Cgroups)
	list("path", before.Paths, s.Paths)
	list("process", before.Children, s.Children)
	for _, k := range sysctls {
		if before.Sysctls[k] != s.Sysctls[k] {
			fmt.Fprintf(&b, "sysctl %s: %q, was %q\n", k, s.Sysctls[k], before.Sysctls[k])
		}
	}
	return b.String()
}

// counters matches the packet and byte counters in nft's listing.
var counters = regexp.MustCompile(`counter packets \d+ bytes \d+`)

// ruleset returns nft's listing without its counters.
func ruleset(lines []string) []string {
	for i, l := range lines {
		lines[i] = strings.TrimSpace(counters.ReplaceAllString(l, "counter"))
	}
	return lines
}

// mounts returns the mount points of this mount namespace.
func mounts() []string {
	b, _ := os.ReadFile("/proc/self/mountinfo")
	var out []string
	for _, l := range nonEmpty(string(b)) {
		if f := strings.Fields(l); len(f) > 4 {
			out = append(out, f[4])
		}
	}
	return out
}

// cgroups returns the top-level groups of every cgroup hierarchy, where the
// kubelet's kubepods groups appear.
func cgroups() []string {
	var out []string
	hierarchies, _ := filepath.Glob("/sys/fs/cgroup/*")
	for _, h := range hierarchies {
		entries, _ := os.ReadDir(h)
		for _, e := range entries {
			if e.IsDir() {
				out = append(out, filepath.Join(h, e.Name()))
			}
		}
	}
	return out
}

// leftovers returns the ids and command lines of the processes that belong
// to a node in stateDir: the components, the shims and the containers the
// shims started, whose command lines name the state folder or whose
// parent does.
func leftovers(stateDir string) (pids []int, cmdlines []string) {
	procs, _ := filepath.Glob("/proc/[0-9]*/cmdline")
	for _, p := range procs {
		var pid int
		if _, err := fmt.Sscanf(p, "/proc/%d/cmdline", &pid); err != nil || pid == os.Getpid() {
			continue
		}
		if b, err := os.ReadFile(p); err == nil && bytes.Contains(b, []byte(stateDir)) {
			pids = append(pids, pid)
			cmdlines = append(cmdlines, strings.Join(nonEmpty(strings.ReplaceAll(string(b), "\x00", "\n")), " "))
		}
	}
	return pids, cmdlines
}

// record writes the host's state before a start to stateDir, where Clean
// finds it after a killed run.
func record(stateDir string, s HostState) error {
	b, err := json.Marshal(s)
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(stateDir, "host-before.json"), b, 0o600)
}

// recorded reads what record wrote, if anything.
func recorded(stateDir string) (HostState, bool) {
	var s HostState
	b, err := os.ReadFile(filepath.Join(stateDir, "host-before.json"))
	return s, err == nil && json.Unmarshal(b, &s) == nil
}

func nonEmpty(s string) []string {
	var out []string
	for l := range strings.Lines(s) {
		if l = strings.TrimRight(l, "\n"); strings.TrimSpace(l) != "" {
			out = append(out, l)
		}
	}
	return out
}

// run runs a command through the kit's runner (test/README.md) and
// returns its standard output; the error names the command line and
// carries all it printed. The node runs it also where no test is, in the
// cleanup after a killed run, so it takes no testing.TB.
func run(args ...string) (string, error) {
	r, err := process.Command{}.Run(context.Background(), args[0], args[1:]...)
	return r.Stdout, err
}

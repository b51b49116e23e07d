package cost

import (
	"path"
	"strings"
)

// The classes that are not the name of one binary.
const (
	ClassTestBinaries  = "test binaries (the suites and their load)"
	ClassGoToolchain   = "go toolchain (builds)"
	ClassOther         = "other"
	ClassContainerShim = "containerd-shim"
	// ClassNotAttributed is the machine's busy time no class accounts
	// for: processes that lived between two samples, the CPU a process
	// used after its last sample, and the kernel's own work.
	ClassNotAttributed = "not attributed (short-lived processes, the kernel)"
)

// classes maps the name of a binary to its class: the processes of the test
// stack that run long enough for the samples to see them. It is read, never
// written.
var classes = map[string]string{
	"etcd":                       "etcd",
	"kube-apiserver":             "kube-apiserver",
	"kube-scheduler":             "kube-scheduler",
	"kube-controller-manager":    "kube-controller-manager",
	"kubelet":                    "kubelet",
	"kube-proxy":                 "kube-proxy",
	"containerd":                 "containerd",
	"runc":                       "runc",
	"kube-network-policies":      "kube-network-policies",
	"prometheus":                 "prometheus",
	"operator":                   "prometheus-operator",
	"prometheus-config-reloader": "prometheus-config-reloader",
	"alertmanager":               "alertmanager",
	"cert-controller-manager":    "cert-controller-manager",
	"coredns":                    "coredns",
	"snatch-webhook":             "snatch-webhook",
	"cabundle-syncer":            "cabundle-syncer",
	"kube-state-metrics":         "kube-state-metrics",
	"manager":                    "kim-snatch",
	"toxiproxy-server":           "toxiproxy-server",
	"kubectl":                    "kubectl",
	"go":                         ClassGoToolchain,
	"compile":                    ClassGoToolchain,
	"link":                       ClassGoToolchain,
	"asm":                        ClassGoToolchain,
	"cgo":                        ClassGoToolchain,
	"vet":                        ClassGoToolchain,
	"gcc":                        ClassGoToolchain,
	"cc1":                        ClassGoToolchain,
	"as":                         ClassGoToolchain,
	"ld":                         ClassGoToolchain,
}

// Classify returns the class of a process from its command line, or from
// its comm when the command line is empty, as for a kernel thread or a
// zombie.
func Classify(cmdline []string, comm string) string {
	name := comm
	if len(cmdline) > 0 && cmdline[0] != "" {
		name = cmdline[0]
	}
	// A process that rewrites its command line may leave it as one
	// argument with spaces: the binary is its first word.
	if fields := strings.Fields(name); len(fields) > 0 {
		name = fields[0]
	}
	name = path.Base(name)
	switch {
	case strings.HasPrefix(name, ClassContainerShim):
		return ClassContainerShim
	case strings.HasSuffix(name, ".test"):
		return ClassTestBinaries
	}
	if c, ok := classes[name]; ok {
		return c
	}
	return ClassOther
}

package kubestatemetrics

import (
	"fmt"
	"regexp"
	"strings"
)

// The flags that deploy/'s rules need kube-state-metrics to run with
// (docs/operations.md, "Prometheus"). This is the one place that holds
// their values: test/docs holds every copy in the documents to them, and
// Write exports what they allow.
const (
	// LabelsAllowlist is the value of --metric-labels-allowlist: the
	// Nodes' pool label, the Namespaces' managed-by label and the Pods'
	// opt-out label.
	LabelsAllowlist = "nodes=[worker.gardener.cloud/pool],namespaces=[operator.kyma-project.io/managed-by]," +
		"pods=[kim-snatch.kyma-project.io/opt-out]"
	// OptInMetrics is the value of --metric-opt-in-list.
	OptInMetrics = "kube_pod_nodeselectors"
)

// allowed is LabelsAllowlist by resource.
var allowed = mustParse(LabelsAllowlist)

func mustParse(allowlist string) map[string][]string {
	m, err := ParseLabelsAllowlist(allowlist)
	if err != nil {
		panic(err)
	}
	return m
}

// allowlistEntry matches the entry resource=[label,...] at the start of
// what is left of a label allowlist.
var allowlistEntry = regexp.MustCompile(`^([^=,\[\]]+)=\[([^\]]*)\]`)

// ParseLabelsAllowlist reads a value of --metric-labels-allowlist, entries
// resource=[label,...] separated by commas, into each resource's labels
// in the order given, without the spaces around a name that
// kube-state-metrics drops too. A resource named twice is an error:
// kube-state-metrics keeps only its last entry, and the labels of the
// others are lost.
func ParseLabelsAllowlist(v string) (map[string][]string, error) {
	m := map[string][]string{}
	for rest := v; rest != ""; {
		e := allowlistEntry.FindStringSubmatch(rest)
		if e == nil {
			return nil, fmt.Errorf("label allowlist %q: %q does not start with an entry resource=[label,...]", v, rest)
		}
		name := strings.TrimSpace(e[1])
		if _, twice := m[name]; twice {
			return nil, fmt.Errorf("label allowlist %q names %s twice; kube-state-metrics keeps only the last entry", v, name)
		}
		labels := []string{}
		for l := range strings.SplitSeq(e[2], ",") {
			if l = strings.TrimSpace(l); l != "" {
				labels = append(labels, l)
			}
		}
		m[name] = labels
		rest = rest[len(e[0]):]
		if rest == "" {
			break
		}
		var comma bool
		if rest, comma = strings.CutPrefix(rest, ","); !comma || rest == "" {
			return nil, fmt.Errorf("label allowlist %q: an entry is not followed by a comma and another entry", v)
		}
	}
	return m, nil
}

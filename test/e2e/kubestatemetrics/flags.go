package kubestatemetrics

import (
	"flag"
	"fmt"
	"regexp"
	"slices"
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

// Options are what the stand-in's flags set, as kube-state-metrics' own
// do: without --metric-labels-allowlist it exports no label of an object,
// and without --metric-opt-in-list no opt-in metric.
type Options struct {
	// Allowlist holds each resource's allowed labels; the resource "*"
	// stands for every resource, and the label "*" for every label.
	Allowlist map[string][]string
	// OptIn are the opt-in metrics to export.
	OptIn []string
}

// ParseFlags reads, from a command's arguments, the flags of
// kube-state-metrics that the stand-in honours. Like kube-state-metrics,
// it refuses an argument it does not know.
func ParseFlags(args []string) (Options, error) {
	fs := flag.NewFlagSet("kube-state-metrics", flag.ContinueOnError)
	allow := fs.String("metric-labels-allowlist", "", "labels to export by resource, as resource=[label,...],...")
	optIn := fs.String("metric-opt-in-list", "", "opt-in metrics to export, comma-separated")
	if err := fs.Parse(args); err != nil {
		return Options{}, err
	}
	if fs.NArg() > 0 {
		return Options{}, fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	var o Options
	var err error
	if o.Allowlist, err = ParseLabelsAllowlist(*allow); err != nil {
		return Options{}, err
	}
	for m := range strings.SplitSeq(*optIn, ",") {
		if m = strings.TrimSpace(m); m != "" {
			o.OptIn = append(o.OptIn, m)
		}
	}
	return o, nil
}

// allowed returns the labels of resource that o allows, and whether it
// allows every label.
func (o Options) allowed(resource string) (keys []string, all bool) {
	keys = append(slices.Clone(o.Allowlist[resource]), o.Allowlist["*"]...)
	return keys, slices.Contains(keys, "*")
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

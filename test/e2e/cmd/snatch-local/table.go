package main

import (
	"cmp"
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"

	"github.com/kyma-project/kim-snatch/pkg/affinity"
)

// Row is one Pod of the demo as the table shows it.
type Row struct {
	Pod, Namespace string
	// Term says whether the Pod carries the preferred term that
	// snatch-webhook adds.
	Term bool
	// Node is where kube-scheduler bound the Pod, Pool that Node's
	// worker.gardener.cloud/pool label.
	Node, Pool string
}

// rowsOf turns Pods into rows, keeping the order of the namespaces as they
// first appear and sorting the Pods within each by name. pools maps Node
// names to their pool.
func rowsOf(pods []corev1.Pod, pools map[string]string) []Row {
	rank := map[string]int{}
	rows := make([]Row, 0, len(pods))
	for i := range pods {
		p := &pods[i]
		if _, ok := rank[p.Namespace]; !ok {
			rank[p.Namespace] = len(rank)
		}
		rows = append(rows, Row{
			Pod: p.Name, Namespace: p.Namespace, Term: hasTerm(p),
			Node: p.Spec.NodeName, Pool: pools[p.Spec.NodeName],
		})
	}
	slices.SortStableFunc(rows, func(a, b Row) int {
		return cmp.Or(cmp.Compare(rank[a.Namespace], rank[b.Namespace]), strings.Compare(a.Pod, b.Pod))
	})
	return rows
}

// hasTerm reports whether the Pod carries exactly the term of the default
// policy, which is what the stack's webhook replicas add.
func hasTerm(p *corev1.Pod) bool {
	if p.Spec.Affinity == nil || p.Spec.Affinity.NodeAffinity == nil {
		return false
	}
	want := affinity.DefaultPolicy().Term()
	return slices.ContainsFunc(p.Spec.Affinity.NodeAffinity.PreferredDuringSchedulingIgnoredDuringExecution,
		func(t corev1.PreferredSchedulingTerm) bool { return equality.Semantic.DeepEqual(t, want) })
}

// writeTable renders the rows as aligned columns. An unbound Pod shows
// "<none>" for its Node and pool, as kubectl does.
func writeTable(w io.Writer, rows []Row) error {
	tw := tabwriter.NewWriter(w, 0, 0, 3, ' ', 0)
	fmt.Fprintln(tw, "POD\tNAMESPACE\tTERM\tNODE\tPOOL")
	for _, r := range rows {
		term := "none"
		if r.Term {
			term = "injected"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", r.Pod, r.Namespace, term, orNone(r.Node), orNone(r.Pool))
	}
	return tw.Flush()
}

func orNone(s string) string {
	if s == "" {
		return "<none>"
	}
	return s
}

// summarize says per namespace how many Pods carry the term and how they
// are spread over the pools, and lists every Pod whose term is not what
// its namespace calls for: the term in a Kyma-managed namespace, none in
// any other. The placement is the scheduler's preference, not a rule, so
// it is reported, not judged.
func summarize(rows []Row, managed map[string]bool) (lines, problems []string) {
	var order []string
	pods, terms, pools := map[string]int{}, map[string]int{}, map[string]map[string]int{}
	for _, r := range rows {
		if pools[r.Namespace] == nil {
			pools[r.Namespace] = map[string]int{}
			order = append(order, r.Namespace)
		}
		pods[r.Namespace]++
		if r.Term {
			terms[r.Namespace]++
		}
		pools[r.Namespace][orNone(r.Pool)]++
		switch {
		case managed[r.Namespace] && !r.Term:
			problems = append(problems, fmt.Sprintf("%s/%s lacks the term although its namespace is Kyma-managed", r.Namespace, r.Pod))
		case !managed[r.Namespace] && r.Term:
			problems = append(problems, fmt.Sprintf("%s/%s carries the term although its namespace is not Kyma-managed", r.Namespace, r.Pod))
		}
	}
	for _, ns := range order {
		var spread []string
		for p, n := range pools[ns] {
			spread = append(spread, fmt.Sprintf("%s=%d", p, n))
		}
		slices.Sort(spread)
		lines = append(lines, fmt.Sprintf("%s: %d of %d Pods carry the term; pools: %s", ns, terms[ns], pods[ns], strings.Join(spread, " ")))
	}
	return lines, problems
}

package main

import (
	"fmt"
	"io"
	"sort"
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
	sort.SliceStable(rows, func(i, j int) bool {
		if a, b := rank[rows[i].Namespace], rank[rows[j].Namespace]; a != b {
			return a < b
		}
		return rows[i].Pod < rows[j].Pod
	})
	return rows
}

// hasTerm reports whether the Pod carries exactly the term of the default
// policy, which is what the stack's webhook replicas add.
func hasTerm(p *corev1.Pod) bool {
	a := p.Spec.Affinity
	if a == nil || a.NodeAffinity == nil {
		return false
	}
	want := affinity.DefaultPolicy().Term()
	for _, t := range a.NodeAffinity.PreferredDuringSchedulingIgnoredDuringExecution {
		if equality.Semantic.DeepEqual(t, want) {
			return true
		}
	}
	return false
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
	type tally struct {
		pods, terms int
		pools       map[string]int
	}
	by := map[string]*tally{}
	for _, r := range rows {
		t, ok := by[r.Namespace]
		if !ok {
			t = &tally{pools: map[string]int{}}
			by[r.Namespace] = t
			order = append(order, r.Namespace)
		}
		t.pods++
		if r.Term {
			t.terms++
		}
		t.pools[orNone(r.Pool)]++
		switch {
		case managed[r.Namespace] && !r.Term:
			problems = append(problems, fmt.Sprintf("%s/%s lacks the term although its namespace is Kyma-managed", r.Namespace, r.Pod))
		case !managed[r.Namespace] && r.Term:
			problems = append(problems, fmt.Sprintf("%s/%s carries the term although its namespace is not Kyma-managed", r.Namespace, r.Pod))
		}
	}
	for _, ns := range order {
		t := by[ns]
		pools := make([]string, 0, len(t.pools))
		for p, n := range t.pools {
			pools = append(pools, fmt.Sprintf("%s=%d", p, n))
		}
		sort.Strings(pools)
		lines = append(lines, fmt.Sprintf("%s: %d of %d Pods carry the term; pools: %s", ns, t.terms, t.pods, strings.Join(pools, " ")))
	}
	return lines, problems
}

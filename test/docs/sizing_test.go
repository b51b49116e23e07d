package docs

import (
	"regexp"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/runtime"
)

// sizingHeading is the section of docs/operations.md whose table states what
// each workload's container requests and may use.
const sizingHeading = "Sizing"

// The Sizing table's rows "Shipped requests" and "Shipped limits" are what
// the manifests ship, for each column's workload: the CPU and memory each
// cell names, and no CPU limit where its cell names none. The manifests
// hold the figures; the table is held to them.
func TestSizingTableStatesTheShippedResources(t *testing.T) {
	table := markdownTable(readDoc(t, "docs/operations.md").section(t, sizingHeading))
	if len(table) < 2 {
		t.Fatalf("section %s has no table", sizingHeading)
	}
	w := newWorkspace(t)
	containers := map[string]corev1.Container{}
	for _, base := range []string{"deploy/webhook", "deploy/syncer"} {
		out, err := w.render("-k", base)
		if err != nil {
			t.Fatal(err)
		}
		for _, u := range decodeAll(t, out) {
			switch {
			case u.GetKind() == "Deployment" && (u.GetName() == "snatch-webhook" || u.GetName() == "cabundle-syncer"):
				var d appsv1.Deployment
				fromUnstructured(t, u.Object, &d)
				containers[u.GetName()] = onlyContainer(t, u.GetName(), d.Spec.Template.Spec.Containers)
			case u.GetKind() == "CronJob" && u.GetName() == "kim-snatch-check":
				var cj batchv1.CronJob
				fromUnstructured(t, u.Object, &cj)
				containers["check Job"] = onlyContainer(t, u.GetName(), cj.Spec.JobTemplate.Spec.Template.Spec.Containers)
			}
		}
	}
	header := table[0]
	rows := map[string][]string{}
	for _, r := range table[1:] {
		rows[r[0]] = r
	}
	requests, limits := rows["Shipped requests"], rows["Shipped limits"]
	if requests == nil || limits == nil {
		t.Fatalf("section %s: the table has no rows Shipped requests and Shipped limits", sizingHeading)
	}
	columns := 0
	for i, workload := range header {
		c, ok := containers[workload]
		if !ok {
			continue
		}
		columns++
		if i >= len(requests) || i >= len(limits) {
			t.Errorf("%s: the rows have no cell for %s", sizingHeading, workload)
			continue
		}
		compareResources(t, workload+" requests", requests[i], c.Resources.Requests, true)
		compareResources(t, workload+" limits", limits[i], c.Resources.Limits, false)
	}
	if columns != len(containers) {
		t.Errorf("%s: the table's columns %q name %d of the workloads %d; want one column each", sizingHeading, header, columns, len(containers))
	}
}

var (
	cpuInCell    = regexp.MustCompile(`\bCPU (\d+m?)\b`)
	memoryInCell = regexp.MustCompile(`\bmemory (\d+[KMG]i)\b`)
)

// compareResources checks that a cell names exactly the CPU and memory of
// shipped: each stated quantity equals the manifest's, a CPU the cell does
// not name is not set, and memory, which every container sets, is named.
func compareResources(t *testing.T, what, cell string, shipped corev1.ResourceList, cpuRequired bool) {
	t.Helper()
	for _, r := range []struct {
		name     corev1.ResourceName
		pattern  *regexp.Regexp
		required bool
	}{
		{corev1.ResourceCPU, cpuInCell, cpuRequired},
		{corev1.ResourceMemory, memoryInCell, true},
	} {
		got, set := shipped[r.name]
		m := r.pattern.FindStringSubmatch(cell)
		switch {
		case m == nil && set:
			t.Errorf("%s: the manifest sets %s %s, which %q does not state", what, r.name, got.String(), cell)
		case m == nil && r.required:
			t.Errorf("%s: %q states no %s, and the manifest sets none", what, cell, r.name)
		case m != nil && !set:
			t.Errorf("%s: %q states %s %s, which the manifest does not set", what, cell, r.name, m[1])
		case m != nil:
			if want := resource.MustParse(m[1]); got.Cmp(want) != 0 {
				t.Errorf("%s: %q states %s %s, the manifest sets %s", what, cell, r.name, m[1], got.String())
			}
		}
	}
}

// markdownTable returns the cells of the first table in text, the header
// row first, each cell trimmed.
func markdownTable(text string) [][]string {
	var out [][]string
	for l := range strings.SplitSeq(text, "\n") {
		l = strings.TrimSpace(l)
		if !strings.HasPrefix(l, "|") {
			if len(out) > 0 {
				break
			}
			continue
		}
		if strings.HasPrefix(l, "|---") {
			continue
		}
		cells := strings.Split(strings.Trim(l, "|"), "|")
		for i := range cells {
			cells[i] = strings.TrimSpace(cells[i])
		}
		out = append(out, cells)
	}
	return out
}

func onlyContainer(t *testing.T, name string, cs []corev1.Container) corev1.Container {
	t.Helper()
	if len(cs) != 1 {
		t.Fatalf("%s has %d containers, want 1", name, len(cs))
	}
	return cs[0]
}

func fromUnstructured(t *testing.T, obj map[string]any, into any) {
	t.Helper()
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(obj, into); err != nil {
		t.Fatal(err)
	}
}

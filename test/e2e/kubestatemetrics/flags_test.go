package kubestatemetrics

import (
	"reflect"
	"strings"
	"testing"
)

// ParseLabelsAllowlist reads kube-state-metrics' format, wildcards and
// empty lists included, and refuses what kube-state-metrics would refuse
// or would read with labels lost.
func TestParseLabelsAllowlistReadsEachResourcesLabelsOrSaysWhyNot(t *testing.T) {
	for _, tt := range []struct {
		name, value string
		want        map[string][]string
		err         string
	}{
		{name: "ours_reads_three_resources", value: LabelsAllowlist, want: map[string][]string{
			"nodes": {"worker.gardener.cloud/pool"}, "namespaces": {"operator.kyma-project.io/managed-by"},
			"pods": {"kim-snatch.kyma-project.io/opt-out"},
		}},
		{name: "empty_reads_no_resource", value: "", want: map[string][]string{}},
		{name: "labels_in_order_spaces_dropped", value: "pods=[app, team ], nodes=[]",
			want: map[string][]string{"pods": {"app", "team"}, "nodes": {}}},
		{name: "wildcards_kept", value: "*=[*],pods=[example.org/*]", want: map[string][]string{"*": {"*"}, "pods": {"example.org/*"}}},
		{name: "resource_twice_refused", value: "pods=[app],pods=[team]", err: "names pods twice"},
		{name: "trailing_comma_refused", value: "pods=[app],", err: "not followed by"},
		{name: "no_brackets_refused", value: "pods=app", err: "does not start with an entry"},
		{name: "junk_between_refused", value: "pods=[app] nodes=[x]", err: "not followed by"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseLabelsAllowlist(tt.value)
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("ParseLabelsAllowlist(%q) = %v, %v; want an error containing %q", tt.value, got, err, tt.err)
				}
				return
			}
			if err != nil || !reflect.DeepEqual(got, tt.want) {
				t.Errorf("ParseLabelsAllowlist(%q) = %v, %v; want %v", tt.value, got, err, tt.want)
			}
		})
	}
}

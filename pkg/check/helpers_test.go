package check

import (
	"testing"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	"k8s.io/utils/ptr"
)

func TestCoversPodCreateOnlyForCreateOfNamespacedCorePods(t *testing.T) {
	rule := func(ops []admissionregistrationv1.OperationType, groups, versions, resources []string, scope *admissionregistrationv1.ScopeType) admissionregistrationv1.RuleWithOperations {
		return admissionregistrationv1.RuleWithOperations{Operations: ops, Rule: admissionregistrationv1.Rule{APIGroups: groups, APIVersions: versions, Resources: resources, Scope: scope}}
	}
	create := []admissionregistrationv1.OperationType{admissionregistrationv1.Create}
	core, v1, pods := []string{""}, []string{"v1"}, []string{"pods"}
	tests := []struct {
		name  string
		rules []admissionregistrationv1.RuleWithOperations
		want  bool
	}{
		{name: "exact_rule_covers", rules: []admissionregistrationv1.RuleWithOperations{rule(create, core, v1, pods, ptr.To(admissionregistrationv1.NamespacedScope))}, want: true},
		{name: "wildcards_cover", rules: []admissionregistrationv1.RuleWithOperations{rule([]admissionregistrationv1.OperationType{"*"}, []string{"*"}, []string{"*"}, []string{"*/*"}, ptr.To(admissionregistrationv1.AllScopes))}, want: true},
		{name: "second_rule_matches", rules: []admissionregistrationv1.RuleWithOperations{rule(create, []string{"apps"}, v1, []string{"deployments"}, nil), rule(create, core, v1, pods, nil)}, want: true},
		{name: "no_rules_do_not_cover"},
		{name: "update_only_does_not_cover", rules: []admissionregistrationv1.RuleWithOperations{rule([]admissionregistrationv1.OperationType{admissionregistrationv1.Update}, core, v1, pods, nil)}},
		{name: "other_group_does_not_cover", rules: []admissionregistrationv1.RuleWithOperations{rule(create, []string{"apps"}, v1, pods, nil)}},
		{name: "other_version_does_not_cover", rules: []admissionregistrationv1.RuleWithOperations{rule(create, core, []string{"v2"}, pods, nil)}},
		{name: "subresource_only_does_not_cover", rules: []admissionregistrationv1.RuleWithOperations{rule(create, core, v1, []string{"pods/binding"}, nil)}},
		{name: "cluster_scope_does_not_cover", rules: []admissionregistrationv1.RuleWithOperations{rule(create, core, v1, pods, ptr.To(admissionregistrationv1.ClusterScope))}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := coversPodCreate(tt.rules); got != tt.want {
				t.Errorf("coversPodCreate() = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestFormatDurationCountsDaysAboveADayAndRoundsBelow(t *testing.T) {
	tests := []struct {
		d    time.Duration
		want string
	}{
		{d: 90*24*time.Hour + 5*time.Hour + 10*time.Minute, want: "90d5h"},
		{d: 24 * time.Hour, want: "1d0h"},
		{d: 23*time.Hour + 59*time.Minute + 40*time.Second, want: "24h0m0s"},
		{d: 90 * time.Second, want: "2m0s"},
	}
	for _, tt := range tests {
		if got := formatDuration(tt.d); got != tt.want {
			t.Errorf("formatDuration(%s) = %q, want %q", tt.d, got, tt.want)
		}
	}
}

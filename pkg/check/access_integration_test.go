package check_test

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	authorizationv1 "k8s.io/api/authorization/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/kyma-project/kim-snatch/pkg/check"
	"github.com/kyma-project/kim-snatch/pkg/check/checktest"
	"github.com/kyma-project/kim-snatch/test/framework"
	"github.com/kyma-project/kim-snatch/test/framework/poll"
)

// The access-denied rule against the API server's own authorizer: an item
// whose read is refused is SKIP, whatever the object (the Secret, the MWC
// and the Lease as much as Pods and Nodes), so that the run is INCOMPLETE
// (exit 4) and never passes a gate, and no item FAILs an installation
// that the credentials could not see.
func TestAccessDeniedSkipsAgainstARealAPIServer(t *testing.T) {
	c := framework.Integration(t, framework.Options{}, "impersonates users of its own, which an existing cluster may not allow")
	ctx := context.Background()
	if _, err := c.CreateNodes(ctx, framework.KymaPool, 1); err != nil {
		t.Fatal(err)
	}
	in := checktest.Healthy(t, itNamespace, itMWC, time.Now())
	must(t, in.Create(ctx, c.Clientset))
	cfg := in.Config()
	cfg.TargetNamespace = itNamespace
	ids := append(allIDs[:len(allIDs):len(allIDs)], check.IDNamespace)

	// Every read check makes, except of the three objects named in omit.
	reads := func(omit ...string) []rbacv1.PolicyRule {
		rules := []rbacv1.PolicyRule{
			{APIGroups: []string{""}, Resources: []string{"pods", "nodes", "namespaces", "services"}, Verbs: []string{"get", "list"}},
			{APIGroups: []string{"discovery.k8s.io"}, Resources: []string{"endpointslices"}, Verbs: []string{"get", "list"}},
		}
		for _, r := range []struct{ group, resource string }{{"", "secrets"}, {"admissionregistration.k8s.io", "mutatingwebhookconfigurations"}, {"coordination.k8s.io", "leases"}} {
			if !slices.Contains(omit, r.resource) {
				rules = append(rules, rbacv1.PolicyRule{APIGroups: []string{r.group}, Resources: []string{r.resource}, Verbs: []string{"get", "list"}})
			}
		}
		return rules
	}
	// The items that need the MWC, besides webhook-configuration.
	needMWC := []string{check.IDCABundle, check.IDWebhookEndpoints, check.IDServedCertificate, check.IDNamespace}
	tests := []struct {
		name  string
		rules []rbacv1.PolicyRule // nil: no rights at all
		// skips are the items that must be SKIP; every other one PASSes.
		skips []string
	}{
		{name: "no_rights_skips_every_item", skips: ids},
		{
			// No create: the admission item, which no webhook answers in
			// this control plane, is left out of the way.
			name:  "secret_mwc_and_lease_denied_skip_like_pods_and_nodes",
			rules: reads("secrets", "mutatingwebhookconfigurations", "leases"),
			skips: append([]string{check.IDSyncerLease, check.IDCASecret, check.IDWebhookConfiguration, check.IDAdmission}, needMWC...),
		},
		{
			// Every read, but no SubjectAccessReview: whether the leader may
			// patch the MWC was not asked, so syncer-lease is not seen.
			name:  "subjectaccessreview_denied_skips_the_lease",
			rules: reads(),
			skips: []string{check.IDSyncerLease, check.IDAdmission},
		},
		{
			name: "subjectaccessreview_allowed_passes_the_lease",
			rules: append(reads(), rbacv1.PolicyRule{
				APIGroups: []string{"authorization.k8s.io"}, Resources: []string{"subjectaccessreviews"}, Verbs: []string{"create"},
			}),
			skips: []string{check.IDAdmission},
		},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			user := "kim-snatch-check-user-" + string(rune('a'+i))
			if tt.rules != nil {
				grant(t, c.Clientset, user, tt.rules)
			}
			rc := rest.CopyConfig(c.Config)
			rc.Impersonate = rest.ImpersonationConfig{UserName: user}
			runCtx, cancel := context.WithTimeout(ctx, 30*time.Second)
			defer cancel()
			r := check.Run(runCtx, kubernetes.NewForConfigOrDie(rc), cfg, time.Now())
			for _, res := range r.Checks {
				want := check.StatusPass
				if slices.Contains(tt.skips, res.ID) {
					want = check.StatusSkip
				}
				if res.Status != want {
					t.Errorf("%s = %s %q, want %s", res.ID, res.Status, res.Message, want)
				}
			}
			if r.Status != check.StatusIncomplete || r.ExitCode() != 4 {
				t.Errorf("report %s, exit code %d; want INCOMPLETE, 4", r.Status, r.ExitCode())
			}
		})
	}
}

// grant binds a ClusterRole of rules to user.
func grant(t *testing.T, cs kubernetes.Interface, user string, rules []rbacv1.PolicyRule) {
	t.Helper()
	ctx := context.Background()
	_, err := cs.RbacV1().ClusterRoles().Create(ctx, &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: user}, Rules: rules}, metav1.CreateOptions{})
	must(t, err)
	_, err = cs.RbacV1().ClusterRoleBindings().Create(ctx, &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: user},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: user},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: user}},
	}, metav1.CreateOptions{})
	must(t, err)
	// The authorizer learns of new RBAC objects from its informers: wait
	// until it grants each rule, so that a case never runs before its grant.
	for _, r := range rules {
		attrs := &authorizationv1.ResourceAttributes{Verb: r.Verbs[0], Group: r.APIGroups[0], Resource: r.Resources[0]}
		poll.Eventually(t, fmt.Sprintf("the authorizer to grant %s %+v", user, *attrs), func(ctx context.Context) error {
			sar, err := cs.AuthorizationV1().SubjectAccessReviews().Create(ctx, &authorizationv1.SubjectAccessReview{
				Spec: authorizationv1.SubjectAccessReviewSpec{User: user, ResourceAttributes: attrs},
			}, metav1.CreateOptions{})
			switch {
			case err != nil:
				return err
			case !sar.Status.Allowed:
				return fmt.Errorf("not allowed: %q", sar.Status.Reason)
			}
			return nil
		})
	}
}

package e2e

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"testing"
	"time"

	promv1 "github.com/prometheus/client_golang/api/prometheus/v1"
	"github.com/prometheus/common/model"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kyma-project/kim-snatch/test/e2e/stack"
	"github.com/kyma-project/kim-snatch/test/framework"
	"github.com/kyma-project/kim-snatch/test/framework/poll"
	"github.com/kyma-project/kim-snatch/test/tools"
)

// The Prometheus stack of test/e2e/neighbours/monitoring, on the real
// node: prometheus-operator reads the shipped ServiceMonitors and
// PrometheusRules, Prometheus scrapes both binaries over the Pod network
// through the shipped NetworkPolicies, under Kyma's deny-all, and sends its
// alerts to Alertmanager, whose receiver is the suite.

// monitored returns the API of the Prometheus of profile, or skips t where
// the suite does not run the stack.
func monitored(t *testing.T, profile string) promv1.API {
	t.Helper()
	requireNode(t, "it runs no Prometheus stack")
	prom, err := stack.Prometheus(t.Context(), sys.Clientset(), stack.Profiles[profile])
	if err != nil {
		t.Fatal(err)
	}
	return prom
}

// Every running replica of both binaries is a target of the job its
// ServiceMonitor names, and up.
func TestPrometheusScrapesEveryReplicaThroughTheShippedServiceMonitors(t *testing.T) {
	framework.InTier(t, framework.Full, "the smoke's break reaches Alertmanager only through these scrapes")
	framework.Shares(t)
	prom := monitored(t, stack.ProfileAPIServer)
	want := map[string]string{} // pod -> job
	for _, app := range []string{stack.WebhookName, stack.SyncerName} {
		pods := runningPods(t, app)
		if len(pods) == 0 {
			t.Fatalf("no running %s replica to be scraped", app)
		}
		for _, p := range pods {
			want[p.Name] = app + "-metrics"
		}
	}
	var got map[string]string
	err := poll.Until(t.Context(), fmt.Sprintf("every replica %v an up target", want), func(ctx context.Context) error {
		v, err := queryVector(ctx, prom, `up{namespace="`+stack.Namespace+`"} == 1`)
		if err != nil {
			return err
		}
		got = map[string]string{}
		for _, s := range v {
			got[string(s.Metric["pod"])] = string(s.Metric["job"])
		}
		for pod, job := range want {
			if got[pod] != job {
				return fmt.Errorf("targets up in %s: %v", stack.Namespace, got)
			}
		}
		return nil
	}, poll.Timeout(2*time.Minute))
	if err != nil {
		t.Error(err)
	}
	logf("monitoring: Prometheus scrapes %d replicas, all up: %v", len(want), got)
}

// The Prometheus of the API server scraped profile scrapes the
// kube-apiserver and evaluates the record of that profile, which the
// overlay's deploy/components/apiserver-scraped sets; the Shoot profile's
// scrapes no kube-apiserver and evaluates the Shoot profile's record,
// which deploy/webhook sets. Both scrape both binaries.
func TestEachProfileScrapesWhatItReaches(t *testing.T) {
	framework.InTier(t, framework.Full, "the smoke's break fires in each profile only through these scrapes")
	framework.Shares(t)
	const (
		apiserver        = `up{job="apiserver"} == 1`
		apiserverProfile = `kim_snatch:monitoring_profile:info{profile="apiserver"}`
		shootProfile     = `kim_snatch:monitoring_profile:info{profile="shoot"}`
	)
	for profile, want := range map[string]bool{stack.ProfileAPIServer: true, stack.ProfileShoot: false} {
		prom := monitored(t, profile)
		what := fmt.Sprintf("the kube-apiserver's series and its profile record %v, the other profile's record %v, and both binaries'",
			want, !want)
		err := poll.Until(t.Context(), what, func(ctx context.Context) error {
			got := map[string]bool{}
			for _, q := range []string{apiserver, apiserverProfile, shootProfile, `up{job="snatch-webhook-metrics"} == 1`, `up{job="cabundle-syncer-metrics"} == 1`} {
				v, err := queryVector(ctx, prom, q)
				if err != nil {
					return err
				}
				got[q] = len(v) > 0
			}
			if got[apiserver] != want || got[apiserverProfile] != want || got[shootProfile] != !want ||
				!got[`up{job="snatch-webhook-metrics"} == 1`] || !got[`up{job="cabundle-syncer-metrics"} == 1`] {
				return fmt.Errorf("series present %v", got)
			}
			return nil
		}, poll.Timeout(2*time.Minute))
		if err != nil {
			t.Errorf("%s profile: %v", profileTitles[profile], err)
		}
	}
}

// The Prometheus of each profile loaded every rule of the shipped
// PrometheusRules, and the fleet component's, and evaluates each without
// error.
func TestPrometheusLoadsEveryShippedRule(t *testing.T) {
	framework.InTier(t, framework.Full, "every rule; the smoke's break proves the rules it fires")
	framework.Shares(t)
	want := shippedRuleNames(t)
	// Both profiles' settings record kim_snatch:monitoring_profile:info,
	// and each Prometheus selects its own (test/e2e/neighbours/monitoring):
	// it loads one of the two.
	const profileRecord = "kim_snatch:monitoring_profile:info"
	if i := slices.Index(want, profileRecord); i >= 0 && slices.Contains(want[i+1:], profileRecord) {
		want = slices.Delete(want, i, i+1)
	}
	for profile := range stack.Profiles {
		prom := monitored(t, profile)
		var got, bad []string
		err := poll.Until(t.Context(), fmt.Sprintf("the shipped rules %v, each healthy", want), func(ctx context.Context) error {
			res, err := prom.Rules(ctx, nil)
			if err != nil {
				return err
			}
			got, bad = got[:0], bad[:0]
			for _, g := range res.Groups {
				for _, r := range g.Rules {
					name, health, lastErr := ruleState(r)
					got = append(got, name)
					if health != promv1.RuleHealthGood {
						bad = append(bad, name+" ("+string(health)+": "+lastErr+")")
					}
				}
			}
			slices.Sort(got)
			if !slices.Equal(got, want) || len(bad) > 0 {
				return fmt.Errorf("Prometheus has the rules %v; not healthy: %v", got, bad)
			}
			return nil
		}, poll.Timeout(2*time.Minute))
		if err != nil {
			t.Errorf("%s profile: %v", profileTitles[profile], err)
		}
		logf("monitoring, %s profile: Prometheus evaluates all %d shipped rules", profileTitles[profile], len(want))
	}
}

// queryVector runs an instant query and returns its vector.
func queryVector(ctx context.Context, prom promv1.API, q string) (model.Vector, error) {
	v, _, _, err := prom.Query(ctx, q, time.Now())
	if err != nil {
		return nil, err
	}
	vec, ok := v.(model.Vector)
	if !ok {
		return nil, errors.New("not a vector: " + v.Type().String())
	}
	return vec, nil
}

// ruleState returns a rule's name, health and last error.
func ruleState(r any) (string, promv1.RuleHealth, string) {
	switch r := r.(type) {
	case promv1.AlertingRule:
		return r.Name, r.Health, r.LastError
	case promv1.RecordingRule:
		return r.Name, r.Health, r.LastError
	}
	return "", "", ""
}

// shippedRuleNames returns the names of the alerts and records of the
// PrometheusRules the suite installs (test/e2e/overlay: deploy/default and
// the fleet component), sorted, each as often as it is defined.
func shippedRuleNames(t *testing.T) []string {
	t.Helper()
	root, err := tools.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	rendered, err := stack.Kubectl(t.Context(), "", "kustomize", filepath.Join(root, "test", "e2e", "overlay"))
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, rule := range prometheusRules(t, []byte(rendered)) {
		if name, ok := rule["alert"].(string); ok {
			names = append(names, name)
		} else if name, ok := rule["record"].(string); ok {
			names = append(names, name)
		}
	}
	slices.Sort(names)
	return names
}

// runningPods returns the running Pods of the Deployment app in
// kyma-system.
func runningPods(t *testing.T, app string) []corev1.Pod {
	t.Helper()
	list, err := sys.Clientset().CoreV1().Pods(stack.Namespace).List(t.Context(), metav1.ListOptions{LabelSelector: "app.kubernetes.io/name=" + app})
	if err != nil {
		t.Fatal(err)
	}
	return slices.DeleteFunc(list.Items, func(p corev1.Pod) bool {
		return p.Status.Phase != corev1.PodRunning || p.DeletionTimestamp != nil
	})
}

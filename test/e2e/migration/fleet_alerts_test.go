package migration

import (
	"context"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	promv1 "github.com/prometheus/client_golang/api/prometheus/v1"
	"github.com/prometheus/common/model"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kyma-project/kim-snatch/test/e2e/stack"
	"github.com/kyma-project/kim-snatch/test/framework/objects"
	"github.com/kyma-project/kim-snatch/test/framework/poll"
)

// The alerts of the fleet path. The runtime runs the Prometheus stack of
// test/e2e/neighbours/monitoring, both monitoring profiles, and the
// module's optional monitoring.yaml is applied as docs/migration.md has
// the operator apply it on a runtime with prometheus-operator: with the
// third bridge version, the first whose webhook calls snatch-webhook
// answers, server-side, beside the module, with the binding and
// NetworkPolicy of deploy/components/prometheus; and deleted before the
// step back to the second. The rules and scrapes are the shipped ones.
//
// After each scenario no alert of either profile may stay pending or
// firing: settle waits until none is, up to quietTimeout, and records how
// long that took. Each step's gate records the alerts active then, settle
// those it waits for, and the receiver of the Alertmanager main every
// notification, which the closing table lists per scenario.

const (
	// monitoringDir is the workspace's kustomization of monitoring.yaml.
	monitoringDir = "monitoring"
	// quietTimeout bounds settle. Most shipped rules wait 10 or 15
	// minutes before they fire, so an alert still pending this long after
	// a scenario is one that pages for it.
	quietTimeout = 12 * time.Minute
)

// fleetAlerts follows the alerts of both profiles through the scenarios.
type fleetAlerts struct {
	proms    map[string]promv1.API // by profile
	receiver *stack.AlertReceiver
	// rules are the alerting rules monitoring.yaml ships.
	rules []string
	// seen are, by scenario, the alerts active at some gate, or after its
	// end until it was quiet: "<profile>/<alert> <state>[ after its end]".
	seen map[string]map[string]bool
	// quiet is, by scenario, how long after its end no alert was active.
	quiet map[string]time.Duration
	// sent are, by scenario, the firing notifications Alertmanager sent
	// from its start until it was quiet: "<profile>/<alert>" and how many.
	sent map[string]map[string]int
	// since is when the scenario being watched began.
	since time.Time
}

// startMonitoring applies the module's monitoring.yaml of version with
// the Prometheus component, and waits until both profiles' Prometheus have
// loaded every alerting rule it ships.
func (f *fleet) startMonitoring(ctx context.Context, t *testing.T, version string) {
	t.Helper()
	e := f.e
	raw, err := os.ReadFile(filepath.Join(e.workspace, "modules", version, "monitoring.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	rules, err := alertingRules(raw)
	if err != nil || len(rules) == 0 {
		t.Fatalf("the alerting rules of monitoring.yaml %s: %v %v", version, rules, err)
	}
	dir := filepath.Join(e.workspace, monitoringDir)
	if err := writeFile(filepath.Join(dir, "monitoring.yaml"), raw); err != nil {
		t.Fatal(err)
	}
	kust := "resources:\n  - monitoring.yaml\ncomponents:\n  - ../deploy/components/prometheus\n"
	if err := writeFile(filepath.Join(dir, "kustomization.yaml"), []byte(kust)); err != nil {
		t.Fatal(err)
	}
	e.progress("applying monitoring.yaml of %s, %d alerting rules", version, len(rules))
	if _, err := e.kubectl(ctx, nil, "apply", "--server-side", "-k", dir); err != nil {
		t.Fatal(err)
	}
	a := &fleetAlerts{proms: map[string]promv1.API{}, rules: rules, seen: map[string]map[string]bool{},
		quiet: map[string]time.Duration{}, sent: map[string]map[string]int{}, since: time.Now()}
	for profile, name := range stack.Profiles {
		if a.proms[profile], err = stack.Prometheus(ctx, e.client, name); err != nil {
			t.Fatal(err)
		}
	}
	if a.receiver, err = stack.StartAlertReceiver(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := a.receiver.Stop(); err != nil {
			t.Error(err)
		}
	})
	for profile, prom := range a.proms {
		what := fmt.Sprintf("the Prometheus of the %s profile to load the rules of monitoring.yaml %v", profile, rules)
		err := poll.Until(ctx, what, func(ctx context.Context) error {
			loaded, err := loadedAlertingRules(ctx, prom)
			if err != nil {
				return err
			}
			if !containsAll(loaded, rules) {
				return fmt.Errorf("loaded %v", loaded)
			}
			return nil
		}, poll.Timeout(3*time.Minute))
		if err != nil {
			t.Fatal(err)
		}
	}
	f.alerts = a
}

// stopMonitoring deletes what startMonitoring applied, as the operator
// does before the step back to the second bridge version.
func (f *fleet) stopMonitoring(ctx context.Context, t *testing.T) {
	t.Helper()
	f.e.progress("deleting monitoring.yaml")
	if _, err := f.e.kubectl(ctx, nil, "delete", "-k", filepath.Join(f.e.workspace, monitoringDir)); err != nil {
		t.Fatal(err)
	}
	for profile, prom := range f.alerts.proms {
		what := fmt.Sprintf("the Prometheus of the %s profile to drop the rules of the deleted monitoring.yaml", profile)
		err := poll.Until(ctx, what, func(ctx context.Context) error {
			loaded, err := loadedAlertingRules(ctx, prom)
			if err != nil {
				return err
			}
			var kept []string
			for _, r := range f.alerts.rules {
				if slices.Contains(loaded, r) {
					kept = append(kept, r)
				}
			}
			if len(kept) > 0 {
				return fmt.Errorf("still loaded: %v", kept)
			}
			return nil
		}, poll.Timeout(3*time.Minute))
		if err != nil {
			t.Error(err)
		}
	}
}

// observe records the alerts active at a gate of scenario.
func (a *fleetAlerts) observe(ctx context.Context, scenario string) {
	if a == nil {
		return
	}
	if a.seen[scenario] == nil {
		a.seen[scenario] = map[string]bool{}
	}
	active, err := a.active(ctx)
	if err != nil {
		a.seen[scenario][err.Error()] = true
		return
	}
	for _, s := range active {
		a.seen[scenario][s] = true
	}
}

// settle waits until, within quietTimeout of the end of scenario, no
// alert is pending or firing in either profile and, where the binaries are
// running, each of their ready Pods is an up target of both, and records
// how long that took. It fails t if that does not happen, or if
// Alertmanager sent a firing notification since the scenario began.
func (a *fleetAlerts) settle(ctx context.Context, t *testing.T, e *env, scenario string, running bool) {
	t.Helper()
	start := time.Now()
	if a.seen[scenario] == nil {
		a.seen[scenario] = map[string]bool{}
	}
	// Paced at 5 s: how long the alerts took to be quiet is recorded.
	err := poll.Until(ctx, "the alerts quiet after the scenario's end", func(ctx context.Context) error {
		active, err := a.active(ctx)
		if err != nil {
			return err
		}
		for _, s := range active {
			a.seen[scenario][s+" after its end"] = true
		}
		unscraped := ""
		if running {
			unscraped = a.unscraped(ctx, e)
		}
		if len(active) > 0 || unscraped != "" {
			return fmt.Errorf("active %v %s", active, unscraped)
		}
		return nil
	}, poll.Timeout(quietTimeout), poll.Interval(5*time.Second))
	if err != nil {
		t.Errorf("%s: %v", scenario, err)
	} else {
		a.quiet[scenario] = time.Since(start)
		e.progress("%s: alerts quiet %.0f s after its end", scenario, a.quiet[scenario].Seconds())
	}
	a.sent[scenario] = a.notifications()
	if len(a.sent[scenario]) > 0 {
		t.Errorf("%s: Alertmanager sent firing notifications %v, want none", scenario, a.sent[scenario])
	}
}

// active returns the pending and firing alerts of both profiles, sorted.
func (a *fleetAlerts) active(ctx context.Context) ([]string, error) {
	var out []string
	for profile, prom := range a.proms {
		res, err := prom.Alerts(ctx)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", profile, err)
		}
		for _, al := range res.Alerts {
			out = append(out, fmt.Sprintf("%s/%s %s", profile, al.Labels[model.AlertNameLabel], al.State))
		}
	}
	slices.Sort(out)
	return out, nil
}

// unscraped says which binary's ready Pods are not all up targets of its
// job in both profiles, or "" if all are: without the scrapes the rules
// that judge the binaries have no data, and quiet would say nothing.
func (a *fleetAlerts) unscraped(ctx context.Context, e *env) string {
	for _, binary := range []string{"snatch-webhook", "cabundle-syncer"} {
		pods, err := e.readyPods(ctx, namespace, "app.kubernetes.io/name="+binary)
		if err != nil || len(pods) == 0 {
			return fmt.Sprintf("no ready Pod of %s: %v", binary, err)
		}
		for profile, prom := range a.proms {
			v, _, _, err := prom.Query(ctx, fmt.Sprintf(`up{namespace=%q, job="%s-metrics"} == 1`, namespace, binary), time.Now())
			if err != nil {
				return err.Error()
			}
			up := map[string]bool{}
			if vec, ok := v.(model.Vector); ok {
				for _, s := range vec {
					up[string(s.Metric["pod"])] = true
				}
			}
			for _, p := range pods {
				if !up[p.Name] {
					return fmt.Sprintf("%s: Pod %s is not an up target in the %s profile", binary, p.Name, profile)
				}
			}
		}
	}
	return ""
}

// notifications returns, by alert, how many firing notifications of it
// the receiver got since a.since, and moves a.since on to now.
func (a *fleetAlerts) notifications() map[string]int {
	out := map[string]int{}
	for _, n := range a.receiver.Received(a.since) {
		if n.Status == "firing" {
			out[n.Labels["profile"]+"/"+n.Labels[model.AlertNameLabel]]++
		}
	}
	a.since = time.Now()
	return out
}

// table logs, per scenario, the alerts active at its gates, the firing
// notifications Alertmanager sent, and how long after its end the alerts
// were quiet.
func (a *fleetAlerts) table(t *testing.T, scenario string) {
	t.Helper()
	if a == nil {
		return
	}
	seen := slices.Sorted(maps.Keys(a.seen[scenario]))
	sent := a.sent[scenario]
	quiet := "not quiet"
	if d, ok := a.quiet[scenario]; ok {
		quiet = fmt.Sprintf("%.0f s", d.Seconds())
	}
	t.Logf("alerts of %s: active %v; notifications %v; quiet after its end: %s", scenario, seen, sent, quiet)
}

// containsAll reports whether have holds every one of want.
func containsAll(have, want []string) bool {
	for _, w := range want {
		if !slices.Contains(have, w) {
			return false
		}
	}
	return true
}

// loadedAlertingRules returns the names of the alerting rules prom has
// loaded, sorted.
func loadedAlertingRules(ctx context.Context, prom promv1.API) ([]string, error) {
	res, err := prom.Rules(ctx, nil)
	if err != nil {
		return nil, err
	}
	out := []string{}
	for _, g := range res.Groups {
		for _, r := range g.Rules {
			if ar, ok := r.(promv1.AlertingRule); ok {
				out = append(out, ar.Name)
			}
		}
	}
	slices.Sort(out)
	return out, nil
}

// alertingRules returns the names of the alerting rules of the
// PrometheusRules in stream, sorted.
func alertingRules(stream []byte) ([]string, error) {
	objs, err := objects.Decode(stream)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, u := range objs {
		if u.GetKind() != "PrometheusRule" {
			continue
		}
		groups, _, err := unstructured.NestedSlice(u.Object, "spec", "groups")
		if err != nil {
			return nil, err
		}
		for _, g := range groups {
			rules, _, _ := unstructured.NestedSlice(g.(map[string]any), "rules")
			for _, r := range rules {
				if name, ok := r.(map[string]any)["alert"].(string); ok && strings.TrimSpace(name) != "" {
					out = append(out, name)
				}
			}
		}
	}
	slices.Sort(out)
	return out, nil
}

package manifests

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"github.com/kyma-project/kim-snatch/test/framework"
	"github.com/kyma-project/kim-snatch/test/framework/objects"
	"github.com/kyma-project/kim-snatch/test/framework/poll"
	"github.com/kyma-project/kim-snatch/test/process"
	"github.com/kyma-project/kim-snatch/test/tools"
)

const (
	alertmanagerComponent = "deploy/components/alertmanager"
	// inhibitRulesFile holds the same rules in Alertmanager's own format,
	// for an Alertmanager configured by its file.
	inhibitRulesFile = alertmanagerComponent + "/inhibit-rules.yaml"
)

// inhibitRule is one rule of Alertmanager's inhibit_rules.
type inhibitRule struct {
	SourceMatchers []string `json:"source_matchers"`
	TargetMatchers []string `json:"target_matchers"`
	Equal          []string `json:"equal"`
}

// shippedInhibitRules reads inhibitRulesFile.
func shippedInhibitRules(t *testing.T) []inhibitRule {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(tools.MustRepoRoot(t), inhibitRulesFile))
	if err != nil {
		t.Fatal(err)
	}
	var f struct {
		InhibitRules []inhibitRule `json:"inhibit_rules"`
	}
	if err := yaml.UnmarshalStrict(data, &f); err != nil || len(f.InhibitRules) == 0 {
		t.Fatalf("%s: %v, %d rules", inhibitRulesFile, err, len(f.InhibitRules))
	}
	return f.InhibitRules
}

// alertnameMatcher is a matcher of alertname as the rules write it: one
// name, or names joined by |.
var alertnameMatcher = regexp.MustCompile(`^alertname(=|=~)"([A-Za-z|]+)"$`)

// The component adds one AlertmanagerConfig to an overlay, in the
// installation's namespace, which every alert of KIM Snatch carries as its
// label namespace; the API server accepts it with strict validation. Its
// rules are those of inhibit-rules.yaml, and every alert they name is one
// that deploy/ ships.
func TestAlertmanagerComponentShipsTheInhibitionRules(t *testing.T) {
	objs := renderOverlay(t, "components:\n  - ../../"+alertmanagerComponent+"\n")
	base := render(t, defaultInstall)
	cfgs := objects.OfKind(objs, "AlertmanagerConfig")
	if len(objs) != len(base)+1 || len(cfgs) != 1 {
		t.Fatalf("the overlay renders %d objects, want the %d of %s and one AlertmanagerConfig", len(objs), len(base), defaultInstall)
	}
	cfg := cfgs[0]
	if cfg.GetNamespace() != namespace {
		t.Errorf("%s is in namespace %q, want the installation's, %s: prometheus-operator matches its rules to the alerts of its namespace", id(cfg), cfg.GetNamespace(), namespace)
	}
	env := apiServer(t)
	env.namespace(t, namespace, restricted)
	env.warnings.take()
	if err := env.apply(t.Context(), cfg, true); err != nil {
		t.Errorf("%s: %v", id(cfg), err)
	}
	if w := env.warnings.take(); len(w) > 0 {
		t.Errorf("%s: the API server warns: %q", id(cfg), w)
	}
	shipped := shippedInhibitRules(t)
	if got := operatorInhibitRules(t, cfg, false); !slices.EqualFunc(got, shipped, equalRule) {
		t.Errorf("%s holds\n%v\nbut %s holds\n%v", id(cfg), got, inhibitRulesFile, shipped)
	}
	alerts := shippedAlertNames(t)
	for _, r := range shipped {
		for _, m := range slices.Concat(r.SourceMatchers, r.TargetMatchers) {
			sub := alertnameMatcher.FindStringSubmatch(m)
			if sub == nil {
				t.Errorf("%s: matcher %q is not alertname=\"A\" or alertname=~\"A|B\"", inhibitRulesFile, m)
				continue
			}
			for _, name := range strings.Split(sub[2], "|") {
				if !alerts[name] {
					t.Errorf("%s names alert %s, which deploy/ does not ship", inhibitRulesFile, name)
				}
			}
		}
	}
}

func equalRule(a, b inhibitRule) bool {
	return slices.Equal(a.SourceMatchers, b.SourceMatchers) && slices.Equal(a.TargetMatchers, b.TargetMatchers) && slices.Equal(a.Equal, b.Equal)
}

// shippedAlertNames are the alerts of the installation and of the fleet
// alerts' component.
func shippedAlertNames(t *testing.T) map[string]bool {
	t.Helper()
	names := map[string]bool{}
	for _, r := range alerts(t) {
		names[r.Alert] = r.Alert != ""
	}
	eachAlertOf(fleetAlertsRule(t), func(name string, _ map[string]any) { names[name] = true })
	return names
}

// operatorInhibitRules converts the AlertmanagerConfig's rules as
// prometheus-operator does for an Alertmanager that takes matchers in
// their own syntax: each matcher written out, and, with enforce, the
// matcher of the object's namespace added to source and target.
func operatorInhibitRules(t *testing.T, cfg *unstructured.Unstructured, enforce bool) []inhibitRule {
	t.Helper()
	var spec struct {
		InhibitRules []struct {
			SourceMatch, TargetMatch []struct{ Name, Value, MatchType string }
			Equal                    []string
		}
	}
	data, err := json.Marshal(cfg.Object["spec"])
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, &spec); err != nil {
		t.Fatal(err)
	}
	matchers := func(ms []struct{ Name, Value, MatchType string }) []string {
		var out []string
		for _, m := range ms {
			out = append(out, fmt.Sprintf("%s%s%q", m.Name, m.MatchType, m.Value))
		}
		if enforce {
			out = append(out, fmt.Sprintf("namespace=%q", cfg.GetNamespace()))
		}
		return out
	}
	var out []inhibitRule
	for _, r := range spec.InhibitRules {
		out = append(out, inhibitRule{SourceMatchers: matchers(r.SourceMatch), TargetMatchers: matchers(r.TargetMatch), Equal: r.Equal})
	}
	return out
}

// incidentAlert is an alert as Prometheus posts it to Alertmanager.
type incidentAlert struct {
	Labels      map[string]string `json:"labels"`
	Annotations map[string]string `json:"annotations,omitempty"`
}

// incident returns the alerts that one break fires at once in a cluster,
// each with its severity and the namespace every alert carries; cluster
// empty is a cluster's own Alertmanager, where no external label is set.
func incident(cluster string, names ...string) []incidentAlert {
	var out []incidentAlert
	for _, n := range names {
		l := map[string]string{"alertname": n, "severity": "critical", "namespace": namespace}
		if cluster != "" {
			l["cluster"] = cluster
		}
		out = append(out, incidentAlert{Labels: l})
	}
	return out
}

// incidents are the alerts of several breaks, each in its cluster, and the
// alerts that page for each cluster with the shipped rules. A
// notification is keyed by the cluster of its group; the fleet's alert has
// none, and a cluster's own Alertmanager sees none either, so they are
// keyed by alertname.
var incidents = struct {
	alerts []incidentAlert
	paged  map[string][]string
}{
	alerts: slices.Concat(
		// Every webhook replica down where the kube-apiserver is scraped.
		incident("eu-1", "KimSnatchWebhookUnavailable", "KimSnatchWebhookFailingOpen", "KimSnatchKymaPodMissedByWebhook", "KimSnatchTermSLOFastBurn", "KimSnatchLatencySLOFastBurn"),
		// The same in the Shoot profile.
		incident("us-1", "KimSnatchWebhookUnavailable", "KimSnatchKymaPodsAdmittedWithoutWebhook", "KimSnatchKymaPodMissedByWebhook"),
		// A caBundle out of sync in the Shoot profile.
		incident("ap-1", "KimSnatchCABundleOutOfSync", "KimSnatchKymaPodsAdmittedWithoutWebhook", "KimSnatchKymaPodMissedByWebhook"),
		// Calls dropped on the way, no cause alert: eu-1's causes must not
		// mute it.
		incident("sa-1", "KimSnatchWebhookFailingOpen", "KimSnatchTermSLOFastBurn"),
		// The MutatingWebhookConfiguration deleted in the Shoot profile.
		incident("in-1", "KimSnatchWebhookConfigurationMissing", "KimSnatchKymaPodsAdmittedWithoutWebhook", "KimSnatchKymaPodMissedByWebhook"),
		// A certificate not renewed.
		incident("jp-1", "KimSnatchCAExpiresSoon", "KimSnatchWebhookServingCertificateExpiresSoon"),
		// A cluster's own Alertmanager, without the label cluster.
		incident("", "KimSnatchWebhookUnavailable", "KimSnatchWebhookFailingOpen"),
		[]incidentAlert{{Labels: map[string]string{
			"alertname": "KimSnatchFleetVersionUnhealthy", "severity": "critical", "namespace": namespace,
			"webhook_version": "v1.3.0", "syncer_version": "v0.4.0",
		}}},
	),
	paged: map[string][]string{
		"eu-1":                           {"KimSnatchWebhookUnavailable"},
		"us-1":                           {"KimSnatchWebhookUnavailable"},
		"ap-1":                           {"KimSnatchCABundleOutOfSync"},
		"in-1":                           {"KimSnatchWebhookConfigurationMissing"},
		"sa-1":                           {"KimSnatchTermSLOFastBurn", "KimSnatchWebhookFailingOpen"},
		"jp-1":                           {"KimSnatchCAExpiresSoon"},
		"KimSnatchWebhookUnavailable":    {"KimSnatchWebhookUnavailable"},
		"KimSnatchFleetVersionUnhealthy": {"KimSnatchFleetVersionUnhealthy"},
	},
}

// Alertmanager, as the tools build it, with the shipped inhibition rules:
// of the alerts of several breaks at once, each in its own cluster, a
// break with a cause alert pages once, with it. A break without one (calls
// dropped on the way) pages each of its symptoms, and no other cluster's
// cause mutes them; the fleet's alert pages too, and mutes nothing. The
// AlertmanagerConfig's rules, as prometheus-operator converts them with
// the matcher of its namespace, page the same; without rules, every alert
// pages, so the test can tell. Alertmanager groups by
// alertname and cluster, as a fleet's usually does, so that one group
// cannot hide the alerts of another. Everything listens on loopback, and
// Alertmanager runs without its cluster of peers.
func TestInhibitionPagesOncePerClusterAndIncident(t *testing.T) {
	bin := filepath.Join(tools.Neighbours.Path(t), "alertmanager")
	objs := renderOverlay(t, "components:\n  - ../../"+alertmanagerComponent+"\n")
	cfg := objects.OfKind(objs, "AlertmanagerConfig")
	if len(cfg) != 1 {
		t.Fatalf("the component renders %d AlertmanagerConfigs, want 1", len(cfg))
	}
	every := map[string][]string{}
	for _, a := range incidents.alerts {
		k := pageKey(a.Labels)
		every[k] = append(every[k], a.Labels["alertname"])
	}
	for _, tt := range []struct {
		name  string
		rules []inhibitRule
		want  map[string][]string
	}{
		{name: "shipped_file_pages_once_per_incident", rules: shippedInhibitRules(t), want: incidents.paged},
		{name: "alertmanagerconfig_pages_once_per_incident", rules: operatorInhibitRules(t, cfg[0], true), want: incidents.paged},
		{name: "without_rules_every_alert_pages", want: every},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got := runAlertmanager(t, bin, tt.rules, incidents.alerts, total(tt.want))
			for k, names := range tt.want {
				want := slices.Sorted(slices.Values(names))
				if !slices.Equal(got[k], want) {
					t.Errorf("%s: paged %v, want %v", k, got[k], want)
				}
			}
			for k := range got {
				if _, ok := tt.want[k]; !ok {
					t.Errorf("%s: paged %v, want nothing", k, got[k])
				}
			}
		})
	}
}

func total(m map[string][]string) int {
	n := 0
	for _, v := range m {
		n += len(v)
	}
	return n
}

// pageKey keys a notification's group: its cluster, or its alertname
// where it has none.
func pageKey(labels map[string]string) string {
	if c := labels["cluster"]; c != "" {
		return c
	}
	return labels["alertname"]
}

// notification is the part of Alertmanager's webhook payload the test
// reads: one per group it notifies.
type notification struct {
	GroupLabels map[string]string `json:"groupLabels"`
	Alerts      []incidentAlert   `json:"alerts"`
}

// runAlertmanager starts Alertmanager with rules and a webhook receiver
// on loopback, posts alerts, waits until want alerts have been notified or
// a deadline passes, then once more than its group_wait for any others,
// and returns the notified alertnames, sorted, by pageKey of their group.
func runAlertmanager(t *testing.T, bin string, rules []inhibitRule, alerts []incidentAlert, want int) map[string][]string {
	t.Helper()
	var mu sync.Mutex
	got := map[string][]string{}
	notified := 0
	receiver := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var n notification
		if err := json.NewDecoder(r.Body).Decode(&n); err != nil {
			t.Errorf("receiver: %v", err)
		}
		mu.Lock()
		defer mu.Unlock()
		k := pageKey(n.GroupLabels)
		for _, a := range n.Alerts {
			got[k] = append(got[k], a.Labels["alertname"])
			notified++
		}
	}))
	t.Cleanup(receiver.Close)
	url := startAlertmanager(t, bin, rules, receiver.URL)
	body, err := json.Marshal(alerts)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.Post(url+"/api/v2/alerts", "application/json", bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	msg, _ := io.ReadAll(resp.Body)
	_ = resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("POST /api/v2/alerts: %s\n%s", resp.Status, msg)
	}
	count := func() int {
		mu.Lock()
		defer mu.Unlock()
		return notified
	}
	// What arrived is compared below, also after a wait that gives up.
	_ = poll.Until(t.Context(), fmt.Sprintf("%d notifications", want), func(context.Context) error {
		if n := count(); n < want {
			return fmt.Errorf("%d notifications", n)
		}
		return nil
	}, poll.Timeout(10*time.Second))
	time.Sleep(2 * groupWait)
	mu.Lock()
	defer mu.Unlock()
	out := map[string][]string{}
	for k, v := range got {
		out[k] = slices.Sorted(slices.Values(v))
	}
	return out
}

// groupWait is how long Alertmanager waits before it notifies a new group.
const groupWait = time.Second

// startAlertmanager runs Alertmanager on a free loopback port with one
// route to receiverURL and rules, stops it with the test, and returns its
// URL once it is ready.
func startAlertmanager(t *testing.T, bin string, rules []inhibitRule, receiverURL string) string {
	t.Helper()
	dir := t.TempDir()
	config := map[string]any{
		"route": map[string]any{
			"receiver":        "pager",
			"group_by":        []string{"alertname", "cluster"},
			"group_wait":      groupWait.String(),
			"group_interval":  "1h",
			"repeat_interval": "1h",
		},
		"receivers": []any{map[string]any{
			"name":            "pager",
			"webhook_configs": []any{map[string]any{"url": receiverURL, "send_resolved": false}},
		}},
	}
	if len(rules) > 0 {
		config["inhibit_rules"] = rules
	}
	data, err := yaml.Marshal(config)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "alertmanager.yml")
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
	port, err := framework.FreePort()
	if err != nil {
		t.Fatal(err)
	}
	addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
	am, err := process.Start(process.Options{
		Name: "alertmanager",
		Path: bin,
		Args: []string{
			"--config.file=" + path,
			"--storage.path=" + filepath.Join(dir, "data"),
			"--web.listen-address=" + addr,
			"--cluster.listen-address=",
			"--log.level=warn",
		},
		LogPath: filepath.Join(dir, "alertmanager.log"),
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		am.Stop(5 * time.Second)
		if t.Failed() {
			t.Logf("alertmanager.yml:\n%s\nAlertmanager's log:\n%s", data, am.Log())
		}
	})
	url := "http://" + addr
	// The cleanup above logs Alertmanager's log if this fails.
	poll.Eventually(t, "Alertmanager to be ready on "+addr, func(context.Context) error {
		return process.Ready(http.DefaultClient, url+"/-/ready")
	}, poll.Timeout(10*time.Second))
	return url
}

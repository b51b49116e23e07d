package manifests

import (
	"net"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	policyv1 "k8s.io/api/policy/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/intstr"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kyma-project/kim-snatch/pkg/serving"
	"github.com/kyma-project/kim-snatch/test/framework/objects"
)

// Flags of each binary (docs/operations.md). The manifests may pass no others.
var (
	webhookFlags = []string{
		"worker-pool", "pool-label-key", "affinity-weight", "cert-dir", "cert-name", "key-name", "cert-dns-name",
		"request-timeout", "max-in-flight-body-bytes", "max-connections", "webhook-port", "metrics-bind-address", "health-probe-bind-address", "enable-http2",
		"shutdown-delay", "zap-devel", "zap-encoder", "zap-log-level", "zap-stacktrace-level", "zap-time-encoding",
	}
	syncerFlags = []string{
		"secret-namespace", "secret-name", "ca-key", "webhook-configuration", "ca-overlap",
		"leader-elect", "leader-election-namespace", "leader-election-id",
		"metrics-bind-address", "metrics-secure", "health-probe-bind-address", "kubeconfig",
	}
)

func deployment(t testing.TB, objs []*unstructured.Unstructured, name string) *appsv1.Deployment {
	t.Helper()
	var d appsv1.Deployment
	typed(t, find(t, objs, "Deployment", name), &d)
	return &d
}

// container returns the Deployment's only container.
func container(t testing.TB, d *appsv1.Deployment) corev1.Container {
	t.Helper()
	cs := d.Spec.Template.Spec.Containers
	if len(cs) != 1 || len(d.Spec.Template.Spec.InitContainers) != 0 {
		t.Fatalf("Deployment %s has %d containers and %d init containers, want one container", d.Name, len(cs), len(d.Spec.Template.Spec.InitContainers))
	}
	return cs[0]
}

// flags parses the container's --name=value arguments.
func flags(t testing.TB, c corev1.Container) map[string]string {
	t.Helper()
	if len(c.Command) != 0 {
		t.Errorf("container %s overrides the image's entrypoint with %v", c.Name, c.Command)
	}
	out := map[string]string{}
	for _, a := range c.Args {
		name, value, ok := strings.Cut(strings.TrimPrefix(a, "--"), "=")
		if !strings.HasPrefix(a, "--") || !ok {
			t.Errorf("container %s: argument %q is not --name=value", c.Name, a)
			continue
		}
		if _, dup := out[name]; dup {
			t.Errorf("container %s: --%s is given twice", c.Name, name)
		}
		out[name] = value
	}
	return out
}

// flagPort returns the port of a flag holding [host]:port or a bare port.
func flagPort(t testing.TB, c corev1.Container, flag string) int32 {
	t.Helper()
	v, ok := flags(t, c)[flag]
	if !ok {
		t.Fatalf("container %s does not set --%s", c.Name, flag)
	}
	if _, port, err := net.SplitHostPort(v); err == nil {
		v = port
	}
	p, err := strconv.ParseInt(v, 10, 32)
	if err != nil {
		t.Fatalf("container %s: --%s=%s has no port", c.Name, flag, v)
	}
	return int32(p)
}

// containerPort resolves a port name (or number) against the container.
func containerPort(t testing.TB, c corev1.Container, port string) int32 {
	t.Helper()
	for _, p := range c.Ports {
		if p.Name == port || strconv.Itoa(int(p.ContainerPort)) == port {
			return p.ContainerPort
		}
	}
	t.Fatalf("container %s has no port %q", c.Name, port)
	return 0
}

func selects(selector, podLabels map[string]string) bool {
	return len(selector) > 0 && labels.SelectorFromSet(selector).Matches(labels.Set(podLabels))
}

func labelSelects(t testing.TB, sel *metav1.LabelSelector, podLabels map[string]string) bool {
	t.Helper()
	s, err := metav1.LabelSelectorAsSelector(sel)
	if err != nil {
		t.Fatalf("label selector %v: %v", sel, err)
	}
	return sel != nil && !s.Empty() && s.Matches(labels.Set(podLabels))
}

// checkProbesAndMetricsPort checks the readiness and liveness probes on the
// port --health-probe-bind-address opens, and the metrics port.
func checkProbesAndMetricsPort(t *testing.T, c corev1.Container) {
	t.Helper()
	health := flagPort(t, c, "health-probe-bind-address")
	for _, p := range []struct {
		probe *corev1.Probe
		path  string
	}{{c.ReadinessProbe, "/readyz"}, {c.LivenessProbe, "/healthz"}} {
		if p.probe == nil || p.probe.HTTPGet == nil {
			t.Errorf("no HTTP probe for %s", p.path)
			continue
		}
		if p.probe.HTTPGet.Path != p.path || containerPort(t, c, p.probe.HTTPGet.Port.String()) != health {
			t.Errorf("probe %s:%s, want %s on port %d", p.probe.HTTPGet.Port.String(), p.probe.HTTPGet.Path, p.path, health)
		}
	}
	if got, want := containerPort(t, c, "metrics"), flagPort(t, c, "metrics-bind-address"); got != want {
		t.Errorf("container port metrics is %d, --metrics-bind-address opens %d", got, want)
	}

}

// checkOnePDBKeepsAReplica checks that one PDB selects the Deployment's Pods
// and lets a drain evict one replica and keeps another.
func checkOnePDBKeepsAReplica(t *testing.T, objs []*unstructured.Unstructured, d *appsv1.Deployment) {
	t.Helper()
	var pdbs []policyv1.PodDisruptionBudget
	for _, o := range objects.OfKind(objs, "PodDisruptionBudget") {
		var pdb policyv1.PodDisruptionBudget
		typed(t, o, &pdb)
		if labelSelects(t, pdb.Spec.Selector, d.Spec.Template.Labels) {
			pdbs = append(pdbs, pdb)
		}
	}
	if len(pdbs) != 1 {
		t.Fatalf("%d PodDisruptionBudgets select the Pods, want 1", len(pdbs))
	}
	replicas := int(deref(d.Spec.Replicas))
	var maxUnavailable int
	switch spec := pdbs[0].Spec; {
	case spec.MaxUnavailable != nil:
		v, err := intstr.GetScaledValueFromIntOrPercent(spec.MaxUnavailable, replicas, true)
		if err != nil {
			t.Fatal(err)
		}
		maxUnavailable = v
	case spec.MinAvailable != nil:
		v, err := intstr.GetScaledValueFromIntOrPercent(spec.MinAvailable, replicas, true)
		if err != nil {
			t.Fatal(err)
		}
		maxUnavailable = replicas - v
	}
	if maxUnavailable < 1 || replicas-maxUnavailable < 1 {
		t.Errorf("the PDB allows %d of %d replicas to be disrupted, want at least one and not all", maxUnavailable, replicas)
	}
}

func TestDeploymentsFollowTheContract(t *testing.T) {
	tests := []struct {
		name         string
		dir          string
		deployment   string
		minReplicas  int32
		maxReplicas  int32
		allowedFlags []string
		image        string
	}{
		{name: "snatch_webhook_follows_the_contract", dir: webhookBase, deployment: "snatch-webhook", minReplicas: 2, maxReplicas: 100, allowedFlags: webhookFlags, image: "/snatch-webhook:"},
		{name: "cabundle_syncer_follows_the_contract", dir: syncerBase, deployment: "cabundle-syncer", minReplicas: 2, maxReplicas: 2, allowedFlags: syncerFlags, image: "/cabundle-syncer:"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			objs := render(t, tt.dir)
			d := deployment(t, objs, tt.deployment)
			pod := d.Spec.Template.Spec
			c := container(t, d)

			if r := deref(d.Spec.Replicas); r < tt.minReplicas || r > tt.maxReplicas {
				t.Errorf("replicas = %d, want %d to %d", r, tt.minReplicas, tt.maxReplicas)
			}
			if !labelSelects(t, d.Spec.Selector, d.Spec.Template.Labels) {
				t.Errorf("the Deployment's selector does not select its own template")
			}
			for name := range flags(t, c) {
				if !slices.Contains(tt.allowedFlags, name) {
					t.Errorf("--%s is not a flag of %s", name, tt.deployment)
				}
			}
			if !strings.Contains(c.Image, tt.image) || strings.HasSuffix(c.Image, ":latest") {
				t.Errorf("image %q, want the kustomize image %q with a fixed tag", c.Image, tt.image)
			}

			// TestPodTemplatesPassRestrictedPodSecurity has the API server's
			// verdict on the restricted profile; a read-only root filesystem
			// is not part of it.
			if c.SecurityContext == nil || !deref(c.SecurityContext.ReadOnlyRootFilesystem) {
				t.Error("readOnlyRootFilesystem is not true")
			}

			checkProbesAndMetricsPort(t, c)

			for _, r := range []corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory} {
				if _, ok := c.Resources.Requests[r]; !ok {
					t.Errorf("no %s request", r)
				}
			}
			if _, ok := c.Resources.Limits[corev1.ResourceMemory]; !ok {
				t.Error("no memory limit")
			}

			// subPath mounts are never updated by the kubelet.
			for _, m := range c.VolumeMounts {
				if m.SubPath != "" || m.SubPathExpr != "" {
					t.Errorf("volume %s is mounted with a subPath", m.Name)
				}
			}

			if !slices.ContainsFunc(pod.TopologySpreadConstraints, func(c corev1.TopologySpreadConstraint) bool {
				return c.TopologyKey == corev1.LabelHostname && labelSelects(t, c.LabelSelector, d.Spec.Template.Labels)
			}) {
				t.Errorf("no topology spread over %s for the Deployment's Pods", corev1.LabelHostname)
			}

			checkOnePDBKeepsAReplica(t, objs, d)
		})
	}
}

func TestWebhookPodNeedsNoAPIAccess(t *testing.T) {
	objs := render(t, webhookBase)
	d := deployment(t, objs, "snatch-webhook")
	pod := d.Spec.Template.Spec
	var sa corev1.ServiceAccount
	typed(t, find(t, objs, "ServiceAccount", pod.ServiceAccountName), &sa)
	if pod.AutomountServiceAccountToken == nil || *pod.AutomountServiceAccountToken ||
		sa.AutomountServiceAccountToken == nil || *sa.AutomountServiceAccountToken {
		t.Errorf("automountServiceAccountToken is %v on the Pod and %v on ServiceAccount %s, want false on both",
			pod.AutomountServiceAccountToken, sa.AutomountServiceAccountToken, sa.Name)
	}
	find(t, objs, "PriorityClass", pod.PriorityClassName)
	for _, o := range objs {
		if strings.HasPrefix(o.GetAPIVersion(), "rbac.authorization.k8s.io/") {
			t.Errorf("deploy/webhook renders %s: the webhook needs no API access", id(o))
		}
	}
	for _, v := range pod.Volumes {
		if v.Projected != nil {
			t.Errorf("volume %s is a projected volume; the webhook needs no token", v.Name)
		}
	}
}

// The Secret is mounted as a whole directory at --cert-dir, so that the
// kubelet's atomic ..data swap reaches the webhook after a renewal.
func TestWebhookMountsTheCertificateDirectory(t *testing.T) {
	d := deployment(t, render(t, webhookBase), "snatch-webhook")
	c := container(t, d)
	f := flags(t, c)
	var mounts []corev1.VolumeMount
	for _, v := range d.Spec.Template.Spec.Volumes {
		if v.Secret == nil || v.Secret.SecretName != secretName {
			continue
		}
		if v.Secret.Optional != nil && *v.Secret.Optional {
			t.Errorf("the Secret volume is optional; the webhook cannot serve without it")
		}
		if len(v.Secret.Items) != 0 {
			t.Errorf("the Secret volume projects items %v; mount every key", v.Secret.Items)
		}
		for _, m := range c.VolumeMounts {
			if m.Name == v.Name {
				mounts = append(mounts, m)
			}
		}
	}
	if len(mounts) != 1 {
		t.Fatalf("Secret %s is mounted %d times, want once", secretName, len(mounts))
	}
	m := mounts[0]
	if m.MountPath != f["cert-dir"] || !m.ReadOnly || m.SubPath != "" {
		t.Errorf("mount %+v, want read-only at --cert-dir=%s without subPath", m, f["cert-dir"])
	}
	for flag, want := range map[string]string{"cert-name": "tls.crt", "key-name": "tls.key"} {
		if v, ok := f[flag]; ok && v != want {
			t.Errorf("--%s=%s, but the Secret's key is %s", flag, v, want)
		}
	}
}

func TestSyncerPointsAtTheSecretAndTheWebhookConfiguration(t *testing.T) {
	objs := render(t, syncerBase)
	d := deployment(t, objs, "cabundle-syncer")
	c := container(t, d)
	f := flags(t, c)
	if d.Spec.Template.Spec.ServiceAccountName != syncerServiceAccount {
		t.Errorf("serviceAccountName %q, want %s", d.Spec.Template.Spec.ServiceAccountName, syncerServiceAccount)
	}
	find(t, objs, "ServiceAccount", syncerServiceAccount)
	for flag, want := range map[string]string{
		"secret-name":           secretName,
		"ca-key":                "ca.crt",
		"webhook-configuration": webhookConfiguration,
		"leader-elect":          "true",
	} {
		if f[flag] != want {
			t.Errorf("--%s=%q, want %q", flag, f[flag], want)
		}
	}
	// The namespaces are the Pod's own, either literally or through the
	// downward API, so that they follow kustomize's namespace.
	for _, flag := range []string{"secret-namespace", "leader-election-namespace"} {
		v := f[flag]
		if v == namespace {
			continue
		}
		ref, ok := strings.CutPrefix(v, "$(")
		ref, ok2 := strings.CutSuffix(ref, ")")
		i := slices.IndexFunc(c.Env, func(e corev1.EnvVar) bool { return e.Name == ref })
		if !ok || !ok2 || i < 0 || c.Env[i].ValueFrom == nil || c.Env[i].ValueFrom.FieldRef == nil || c.Env[i].ValueFrom.FieldRef.FieldPath != "metadata.namespace" {
			t.Errorf("--%s=%q is neither %s nor the Pod's namespace from the downward API", flag, v, namespace)
		}
	}
	if f["leader-election-id"] == "" {
		t.Error("--leader-election-id is not set; the Lease name must be fixed for RBAC")
	}
}

// The NetworkPolicies let Prometheus (and, for the webhook, the API server)
// in, and only on the ports that exist.
func TestNetworkPoliciesAdmitScrapersOnlyOnExistingPorts(t *testing.T) {
	tests := []struct {
		name        string
		dir         string
		deployment  string
		openPorts   []string // reachable from anywhere
		scrapePorts []string // reachable from metrics scrapers only
		denyEgress  bool
	}{
		{name: "snatch_webhook_admits_callers_and_scrapers", dir: webhookBase, deployment: "snatch-webhook", openPorts: []string{"webhook"}, scrapePorts: []string{"metrics"}, denyEgress: true},
		{name: "cabundle_syncer_admits_scrapers_alone", dir: syncerBase, deployment: "cabundle-syncer", scrapePorts: []string{"metrics"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			objs := render(t, tt.dir)
			d := deployment(t, objs, tt.deployment)
			c := container(t, d)
			var np networkingv1.NetworkPolicy
			typed(t, find(t, objs, "NetworkPolicy", tt.deployment), &np)
			if !labelSelects(t, &np.Spec.PodSelector, d.Spec.Template.Labels) {
				t.Fatalf("NetworkPolicy %s does not select the Deployment's Pods", np.Name)
			}
			var open, scrape []string
			for _, rule := range np.Spec.Ingress {
				for _, p := range rule.Ports {
					if p.Port == nil {
						t.Errorf("an ingress rule opens all ports")
						continue
					}
					containerPort(t, c, p.Port.String())
					if len(rule.From) == 0 {
						open = append(open, p.Port.String())
						continue
					}
					for _, peer := range rule.From {
						if peer.PodSelector == nil || peer.PodSelector.MatchLabels["networking.kyma-project.io/metrics-scraping"] != "allowed" {
							t.Errorf("port %s admits peer %+v, want only metrics scrapers", p.Port.String(), peer)
						}
					}
					scrape = append(scrape, p.Port.String())
				}
			}
			if !slices.Equal(open, tt.openPorts) || !slices.Equal(scrape, tt.scrapePorts) {
				t.Errorf("open ports %v and scraper ports %v, want %v and %v", open, scrape, tt.openPorts, tt.scrapePorts)
			}
			denies := slices.Contains(np.Spec.PolicyTypes, networkingv1.PolicyTypeEgress) && len(np.Spec.Egress) == 0
			if denies != tt.denyEgress {
				t.Errorf("egress denied = %v, want %v", denies, tt.denyEgress)
			}
		})
	}
}

// The syncer's /metrics is scraped over HTTPS with the scraper's token, which
// it checks against the API server; the webhook, which has no API access,
// stays plain HTTP behind its NetworkPolicy.
func TestSyncerMetricsNeedATokenWhileWebhookMetricsStayPlain(t *testing.T) {
	tests := []struct {
		name       string
		dir        string
		deployment string
		wantSecure bool
	}{
		{name: "snatch_webhook_metrics_stay_plain", dir: webhookBase, deployment: "snatch-webhook"},
		{name: "cabundle_syncer_metrics_need_a_token", dir: syncerBase, deployment: "cabundle-syncer", wantSecure: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			objs := render(t, tt.dir)
			if tt.wantSecure {
				if v, ok := flags(t, container(t, deployment(t, objs, tt.deployment)))["metrics-secure"]; ok && v != "true" {
					t.Errorf("--metrics-secure=%s, want true (the default)", v)
				}
			}
			sm := find(t, objs, "ServiceMonitor", tt.deployment)
			endpoints, _, _ := unstructured.NestedSlice(sm.Object, "spec", "endpoints")
			if len(endpoints) == 0 {
				t.Fatal("the ServiceMonitor has no endpoints")
			}
			for _, e := range endpoints {
				ep := e.(map[string]any)
				scheme, _, _ := unstructured.NestedString(ep, "scheme")
				token, _, _ := unstructured.NestedString(ep, "bearerTokenFile")
				_, hasAuthorization := ep["authorization"]
				skipVerify, _, _ := unstructured.NestedBool(ep, "tlsConfig", "insecureSkipVerify")
				switch {
				case !tt.wantSecure && scheme != "http":
					t.Errorf("scheme %q, want http", scheme)
				case tt.wantSecure && scheme != "https":
					t.Errorf("scheme %q, want https", scheme)
				case tt.wantSecure && token != "/var/run/secrets/kubernetes.io/serviceaccount/token" && !hasAuthorization:
					t.Errorf("bearerTokenFile %q and no authorization: Prometheus would send no token", token)
				case tt.wantSecure && !skipVerify:
					// The certificate is self-signed at each start; no CA
					// could verify it.
					t.Error("tlsConfig.insecureSkipVerify is not true")
				}
			}
		})
	}

	t.Run("metrics_reader_role_reads_metrics_only_and_is_unbound", func(t *testing.T) {
		objs := render(t, syncerBase)
		var role rbacv1.ClusterRole
		typed(t, find(t, objs, "ClusterRole", "cabundle-syncer-metrics-reader"), &role)
		want := []rbacv1.PolicyRule{{NonResourceURLs: []string{"/metrics"}, Verbs: []string{"get"}}}
		if !equality.Semantic.DeepEqual(role.Rules, want) {
			t.Errorf("rules %+v, want exactly %+v", role.Rules, want)
		}
		// Who scrapes is the installation's business: the base binds the
		// role to no one.
		for _, kind := range []string{"RoleBinding", "ClusterRoleBinding"} {
			for _, b := range objects.OfKind(objs, kind) {
				if name, _, _ := unstructured.NestedString(b.Object, "roleRef", "name"); name == role.Name {
					t.Errorf("%s binds %s", id(b), role.Name)
				}
			}
		}
	})
}

// A terminating webhook replica keeps serving for --shutdown-delay and then
// drains for up to serving.DefaultShutdownTimeout; the kubelet kills it
// when the grace period ends, so both must fit in it.
func TestWebhookShutdownFitsTheGracePeriod(t *testing.T) {
	d := deployment(t, render(t, webhookBase), "snatch-webhook")
	v, ok := flags(t, container(t, d))["shutdown-delay"]
	if !ok {
		t.Fatal("the webhook Deployment does not set --shutdown-delay; set it explicitly, as every flag is")
	}
	delay, err := time.ParseDuration(v)
	if err != nil || delay <= 0 {
		t.Fatalf("--shutdown-delay=%s, want a positive duration: without it a terminating replica closes kept-alive connections that the API server may be writing a call to", v)
	}
	grace := 30 * time.Second // the API server's default
	if g := d.Spec.Template.Spec.TerminationGracePeriodSeconds; g != nil {
		grace = time.Duration(*g) * time.Second
	}
	if need := delay + serving.DefaultShutdownTimeout; need > grace {
		t.Errorf("--shutdown-delay %s plus the drain of %s is %s, more than the termination grace period of %s", delay, serving.DefaultShutdownTimeout, need, grace)
	}
}

package manifests

import (
	"slices"
	"testing"
)

// What each base must contain. The syncer's RBAC objects are listed by kind
// only (see TestSyncerBaseContents), since their names are the RBAC file's
// business.
var (
	webhookObjects = []string{
		"Certificate.cert.gardener.cloud/kyma-system/kim-snatch-webhook",
		"Deployment.apps/kyma-system/snatch-webhook",
		"Issuer.cert.gardener.cloud/kyma-system/kim-snatch-selfsigned",
		"MutatingWebhookConfiguration.admissionregistration.k8s.io/kim-snatch-mutating-webhook-configuration",
		"NetworkPolicy.networking.k8s.io/kyma-system/snatch-webhook",
		"PodDisruptionBudget.policy/kyma-system/snatch-webhook",
		"PriorityClass.scheduling.k8s.io/snatch-webhook-priority",
		"PrometheusRule.monitoring.coreos.com/kyma-system/snatch-webhook",
		"Service/kyma-system/snatch-webhook",
		"Service/kyma-system/snatch-webhook-metrics",
		"ServiceAccount/kyma-system/snatch-webhook",
		"ServiceMonitor.monitoring.coreos.com/kyma-system/snatch-webhook",
	}
	syncerObjects = []string{
		"CronJob.batch/kyma-system/kim-snatch-check",
		"Deployment.apps/kyma-system/cabundle-syncer",
		"NetworkPolicy.networking.k8s.io/kyma-system/cabundle-syncer",
		"PodDisruptionBudget.policy/kyma-system/cabundle-syncer",
		"PrometheusRule.monitoring.coreos.com/kyma-system/cabundle-syncer",
		"Service/kyma-system/cabundle-syncer-metrics",
		"ServiceAccount/kyma-system/cabundle-syncer",
		"ServiceAccount/kyma-system/kim-snatch-check",
		"ServiceMonitor.monitoring.coreos.com/kyma-system/cabundle-syncer",
	}
	gardenerCertificate = []string{
		"Certificate.cert.gardener.cloud/kyma-system/kim-snatch-webhook",
		"Issuer.cert.gardener.cloud/kyma-system/kim-snatch-selfsigned",
	}
	certManagerCertificate = []string{
		"Certificate.cert-manager.io/kyma-system/kim-snatch-webhook",
		"Issuer.cert-manager.io/kyma-system/kim-snatch-selfsigned",
	}
	rbacKinds = []string{"Role", "RoleBinding", "ClusterRole", "ClusterRoleBinding"}
)

func TestWebhookBaseContents(t *testing.T) {
	got := ids(render(t, webhookBase))
	want := slices.Sorted(slices.Values(webhookObjects))
	if !slices.Equal(got, want) {
		t.Fatalf("deploy/webhook renders\n  %v\nwant exactly\n  %v\n(in particular no RBAC: the webhook needs no API access)", got, want)
	}
}

func TestSyncerBaseContents(t *testing.T) {
	objs := render(t, syncerBase)
	got := ids(objs)
	for _, w := range syncerObjects {
		if !slices.Contains(got, w) {
			t.Errorf("deploy/syncer lacks %s; it renders %v", w, got)
		}
	}
	for _, o := range objs {
		if !slices.Contains(syncerObjects, id(o)) && !slices.Contains(rbacKinds, o.GetKind()) {
			t.Errorf("deploy/syncer renders unexpected %s", id(o))
		}
	}
	for _, kind := range rbacKinds {
		if len(ofKind(objs, kind)) == 0 {
			t.Errorf("deploy/syncer renders no %s; the syncer needs a Role on the Secret and a ClusterRole on the webhook configuration, each bound", kind)
		}
	}
}

func TestCombinedInstallations(t *testing.T) {
	webhook, syncer := ids(render(t, webhookBase)), ids(render(t, syncerBase))
	both := slices.Sorted(slices.Values(append(slices.Clone(webhook), syncer...)))
	withCertManager := slices.DeleteFunc(slices.Clone(both), func(s string) bool { return slices.Contains(gardenerCertificate, s) })
	withCertManager = slices.Sorted(slices.Values(append(withCertManager, certManagerCertificate...)))

	tests := []struct {
		name string
		dir  string
		want []string
	}{
		{name: "default_is_webhook_and_syncer", dir: defaultInstall, want: both},
		{name: "cert_manager_swaps_only_the_certificate", dir: certManagerSample, want: withCertManager},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := ids(render(t, tt.dir))
			if !slices.Equal(got, tt.want) {
				t.Fatalf("%s renders\n  %v\nwant\n  %v", tt.dir, got, tt.want)
			}
		})
	}
}

func TestEveryObjectIsLabelledAndNamespaced(t *testing.T) {
	for _, dir := range allKustomizations {
		for _, o := range render(t, dir) {
			if got := o.GetLabels()["app.kubernetes.io/part-of"]; got != "kim-snatch" {
				t.Errorf("%s: %s has label app.kubernetes.io/part-of=%q, want kim-snatch", dir, id(o), got)
			}
			if ns := o.GetNamespace(); ns != "" && ns != namespace {
				t.Errorf("%s: %s is in namespace %q, want %s", dir, id(o), ns, namespace)
			}
		}
	}
}

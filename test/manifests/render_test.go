package manifests

import (
	"slices"
	"testing"
)

// checkNamespace is the namespace of the check's admission dry run.
const checkNamespace = "kim-snatch-check"

// The certificate objects that the cert-manager example swaps in for
// Gardener's.
var (
	gardenerCertificate = []string{
		"Certificate.cert.gardener.cloud/kyma-system/kim-snatch-webhook",
		"Issuer.cert.gardener.cloud/kyma-system/kim-snatch-selfsigned",
	}
	certManagerCertificate = []string{
		"Certificate.cert-manager.io/kyma-system/kim-snatch-webhook",
		"Issuer.cert-manager.io/kyma-system/kim-snatch-selfsigned",
	}
)

func TestCombinedInstallationsRenderBothBasesWithTheirCertificate(t *testing.T) {
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
			// The check's own namespace (deploy/syncer/check.yaml), where its
			// identity may dry-run a Pod, holds its own objects.
			if ns := o.GetNamespace(); ns != "" && ns != namespace && ns != checkNamespace {
				t.Errorf("%s: %s is in namespace %q, want %s", dir, id(o), ns, namespace)
			}
		}
	}
}

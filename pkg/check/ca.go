package check

import (
	"crypto/x509"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/kyma-project/kim-snatch/pkg/cabundle"
)

// checkCASecret judges the CA the syncer copies, with the syncer's own
// rules (cabundle.Validate): what the syncer would refuse to write fails
// here. It also returns the current CA for the ca-bundle check, nil when
// there is none.
func checkCASecret(cfg Config, secret *corev1.Secret, err error, now time.Time) (Result, *x509.Certificate) {
	what := fmt.Sprintf("Secret %s/%s", cfg.SecretNamespace, cfg.SecretName)
	certificates := fmt.Sprintf("kubectl -n %s get certificates.cert.gardener.cloud", cfg.SecretNamespace)
	switch {
	case apierrors.IsNotFound(err):
		return fail(IDCASecret, what+" not found; the webhook has no certificate and the syncer no CA",
			fmt.Sprintf("Check the Certificate that writes it (deploy/webhook/certificate.yaml) and cert-management: %s; or fix --secret-namespace/--secret-name.", certificates)), nil
	case err != nil:
		return readFailure(IDCASecret, what, err), nil
	}
	data, ok := secret.Data[cfg.CAKey]
	if !ok {
		return fail(IDCASecret, fmt.Sprintf("%s has no key %s (keys: %s)", what, cfg.CAKey, strings.Join(slices.Sorted(maps.Keys(secret.Data)), ", ")),
			fmt.Sprintf("Check that the Certificate is a CA (isCA: true) so that its issuer writes %s: %s; or fix --ca-key.", cfg.CAKey, certificates)), nil
	}
	usable, verdict := cabundle.Validate(data, now)
	if !verdict.Valid() {
		return fail(IDCASecret, fmt.Sprintf("%s key %s is %s: %s", what, cfg.CAKey, verdict.Reason, verdict.Message),
			fmt.Sprintf("The syncer keeps the last good caBundle until this is fixed; have cert-management reissue the certificate: %s.", certificates)), nil
	}
	// The current CA is the newest by NotBefore, the first of those that
	// tie: an issuer that lists its retired CA next to the new one puts the
	// new one first.
	current := slices.MaxFunc(usable, func(a, b *x509.Certificate) int { return a.NotBefore.Compare(b.NotBefore) })
	ca := fmt.Sprintf("%s key %s: CA %q (sha256 %s)", what, cfg.CAKey, current.Subject.CommonName, shortFingerprint(current))
	if len(usable) > 1 {
		ca += fmt.Sprintf(" (and %d older CA(s))", len(usable)-1)
	}
	left := current.NotAfter.Sub(now)
	if left < cfg.MinCAValidity {
		return warn(IDCASecret, fmt.Sprintf("%s expires at %s, in %s, less than --min-ca-validity %s", ca, cabundle.FormatTime(current.NotAfter), formatDuration(left), cfg.MinCAValidity),
			fmt.Sprintf("The issuer should have renewed it by now; check the Certificate's status and cert-management's logs: %s.", certificates)), current
	}
	return pass(IDCASecret, fmt.Sprintf("%s valid until %s (%s left)", ca, cabundle.FormatTime(current.NotAfter), formatDuration(left))), current
}

// checkCABundle checks that every entry trusts the current CA, by
// fingerprint: the API server verifies the webhook's serving certificate
// against the entry's caBundle, and the webhook serves the certificate that
// belongs to the CA in the Secret. It is skipped when the CA or the
// MutatingWebhookConfiguration is not there to compare.
func checkCABundle(cfg Config, ca *x509.Certificate, mwc *admissionregistrationv1.MutatingWebhookConfiguration, mwcErr error) Result {
	switch {
	case ca == nil:
		return skipped(IDCABundle, fmt.Sprintf("no usable CA in Secret %s/%s to compare with", cfg.SecretNamespace, cfg.SecretName), IDCASecret)
	case mwc == nil:
		return skipped(IDCABundle, mwcAbsent(cfg, mwcErr), IDWebhookConfiguration)
	case len(mwc.Webhooks) == 0:
		return skipped(IDCABundle, fmt.Sprintf("MutatingWebhookConfiguration %s has no webhook entries", cfg.WebhookConfiguration), IDWebhookConfiguration)
	}
	want := cabundle.Fingerprint(ca)
	var missing []string
	for _, wh := range mwc.Webhooks {
		if problem := bundleProblem(wh.ClientConfig.CABundle, want); problem != "" {
			missing = append(missing, fmt.Sprintf("%s (%s)", wh.Name, problem))
		}
	}
	if len(missing) > 0 {
		return fail(IDCABundle,
			fmt.Sprintf("MutatingWebhookConfiguration %s: entries without the CA sha256 %s from Secret %s/%s (%d of %d): %s; the API server cannot verify the webhook and admits Pods without the affinity",
				cfg.WebhookConfiguration, shortFingerprint(ca), cfg.SecretNamespace, cfg.SecretName, len(missing), len(mwc.Webhooks), strings.Join(missing, ", ")),
			fmt.Sprintf("The syncer leader writes the caBundle within seconds; check syncer-lease and its logs and Events: kubectl -n %s logs -l app.kubernetes.io/name=cabundle-syncer.", cfg.Namespace))
	}
	all := fmt.Sprintf("all %d entries of %s trust", len(mwc.Webhooks), cfg.WebhookConfiguration)
	if len(mwc.Webhooks) == 1 {
		all = fmt.Sprintf("the 1 entry of %s trusts", cfg.WebhookConfiguration)
	}
	return pass(IDCABundle, fmt.Sprintf("%s the CA sha256 %s from Secret %s/%s", all, shortFingerprint(ca), cfg.SecretNamespace, cfg.SecretName))
}

// bundleProblem says why a caBundle does not hold the certificate with
// fingerprint want, or "" when it does.
func bundleProblem(bundle []byte, want string) string {
	certs, err := cabundle.Parse(bundle)
	switch {
	case len(strings.TrimSpace(string(bundle))) == 0:
		return "caBundle is empty"
	case err != nil:
		return "caBundle does not parse: " + err.Error()
	case slices.ContainsFunc(certs, func(c *x509.Certificate) bool { return cabundle.Fingerprint(c) == want }):
		return ""
	}
	return fmt.Sprintf("caBundle holds %d other certificate(s)", len(certs))
}

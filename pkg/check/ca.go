package check

import (
	"crypto/x509"
	"fmt"
	"slices"
	"strings"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"

	"github.com/kyma-project/kim-snatch/pkg/cabundle"
)

// checkCASecret judges the CA the syncer copies, with the syncer's own
// rules (cabundle.Validate): what the syncer would refuse to write fails
// here. It also returns the current CA for the ca-bundle check, nil when
// there is none.
func checkCASecret(cfg Config, secret *corev1.Secret, err error, now time.Time) (Result, *x509.Certificate) {
	what := fmt.Sprintf("Secret %s/%s", cfg.SecretNamespace, cfg.SecretName)
	certificates := fmt.Sprintf("kubectl -n %s get certificates.cert.gardener.cloud", cfg.SecretNamespace)
	fail := func(msg, remediation string) (Result, *x509.Certificate) {
		return Result{ID: IDCASecret, Status: StatusFail, Message: msg, Remediation: remediation}, nil
	}
	switch {
	case isNotFound(err):
		return fail(what+" not found; the webhook has no certificate and the syncer no CA",
			fmt.Sprintf("Check the Certificate that writes it (deploy/webhook/certificate.yaml) and cert-management: %s; or fix --secret-namespace/--secret-name.", certificates))
	case err != nil:
		return readFailure(IDCASecret, what, err), nil
	}
	data, ok := secret.Data[cfg.CAKey]
	if !ok {
		keys := make([]string, 0, len(secret.Data))
		for k := range secret.Data {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		return fail(fmt.Sprintf("%s has no key %s (keys: %s)", what, cfg.CAKey, strings.Join(keys, ", ")),
			fmt.Sprintf("Check that the Certificate is a CA (isCA: true) so that its issuer writes %s: %s; or fix --ca-key.", cfg.CAKey, certificates))
	}
	usable, verdict := cabundle.Validate(data, now)
	if !verdict.Valid() {
		return fail(oneLine(fmt.Sprintf("%s key %s is %s: %s", what, cfg.CAKey, verdict.Reason, verdict.Message)),
			fmt.Sprintf("The syncer keeps the last good caBundle until this is fixed; have cert-management reissue the certificate: %s.", certificates))
	}
	current := currentCA(usable)
	fp := cabundle.Fingerprint(current)
	left := current.NotAfter.Sub(now)
	more := ""
	if len(usable) > 1 {
		more = fmt.Sprintf(" (and %d older CA(s))", len(usable)-1)
	}
	if left < cfg.MinCAValidity {
		return Result{
			ID:     IDCASecret,
			Status: StatusWarn,
			Message: fmt.Sprintf("%s key %s: CA %s%s expires at %s, in %s, less than --min-ca-validity %s",
				what, cfg.CAKey, describeCert(current, fp), more, formatTime(current.NotAfter), formatDuration(left), cfg.MinCAValidity),
			Remediation: fmt.Sprintf("The issuer should have renewed it by now; check the Certificate's status and cert-management's logs: %s.", certificates),
		}, current
	}
	return Result{
		ID:     IDCASecret,
		Status: StatusPass,
		Message: fmt.Sprintf("%s key %s: CA %s%s valid until %s (%s left)",
			what, cfg.CAKey, describeCert(current, fp), more, formatTime(current.NotAfter), formatDuration(left)),
	}, current
}

// currentCA picks the newest of the usable CAs, by NotBefore, and the first
// of those that tie: an issuer that lists its retired CA next to the new one
// puts the new one first.
func currentCA(usable []*x509.Certificate) *x509.Certificate {
	current := usable[0]
	for _, c := range usable[1:] {
		if c.NotBefore.After(current.NotBefore) {
			current = c
		}
	}
	return current
}

// checkCABundle checks that every entry trusts the current CA, by
// fingerprint: the API server verifies the webhook's serving certificate
// against the entry's caBundle, and the webhook serves the certificate that
// belongs to the CA in the Secret. It is skipped when the CA or the
// MutatingWebhookConfiguration is not there to compare; ca-secret and
// webhook-configuration report that.
func checkCABundle(cfg Config, ca *x509.Certificate, mwc *admissionregistrationv1.MutatingWebhookConfiguration, mwcErr error) Result {
	skip := func(msg string) Result {
		return Result{ID: IDCABundle, Status: StatusSkip, Message: msg, Remediation: "Fix the check named in the message first."}
	}
	switch {
	case ca == nil:
		return skip(fmt.Sprintf("no usable CA in Secret %s/%s to compare with (see %s)", cfg.SecretNamespace, cfg.SecretName, IDCASecret))
	case mwc == nil:
		reason := "not found"
		if !isNotFound(mwcErr) {
			reason = "could not be read"
		}
		return skip(fmt.Sprintf("MutatingWebhookConfiguration %s %s (see %s)", cfg.WebhookConfiguration, reason, IDWebhookConfiguration))
	case len(mwc.Webhooks) == 0:
		return skip(fmt.Sprintf("MutatingWebhookConfiguration %s has no webhook entries (see %s)", cfg.WebhookConfiguration, IDWebhookConfiguration))
	}
	want := cabundle.Fingerprint(ca)
	var missing []string
	for _, wh := range mwc.Webhooks {
		if problem := bundleProblem(wh.ClientConfig.CABundle, want); problem != "" {
			missing = append(missing, fmt.Sprintf("%s (%s)", wh.Name, problem))
		}
	}
	if len(missing) > 0 {
		return Result{
			ID:     IDCABundle,
			Status: StatusFail,
			Message: fmt.Sprintf("MutatingWebhookConfiguration %s: entries without the CA sha256 %s from Secret %s/%s (%d of %d): %s; the API server cannot verify the webhook and admits Pods without the affinity",
				cfg.WebhookConfiguration, shortFingerprint(want), cfg.SecretNamespace, cfg.SecretName, len(missing), len(mwc.Webhooks), strings.Join(missing, ", ")),
			Remediation: fmt.Sprintf("The syncer leader writes the caBundle within seconds; check syncer-lease and its logs and Events: kubectl -n %s logs -l app.kubernetes.io/name=cabundle-syncer.", cfg.Namespace),
		}
	}
	all := fmt.Sprintf("all %s of %s trust", entries(len(mwc.Webhooks)), cfg.WebhookConfiguration)
	if len(mwc.Webhooks) == 1 {
		all = fmt.Sprintf("the 1 entry of %s trusts", cfg.WebhookConfiguration)
	}
	return Result{
		ID:     IDCABundle,
		Status: StatusPass,
		Message: fmt.Sprintf("%s the CA sha256 %s from Secret %s/%s",
			all, shortFingerprint(want), cfg.SecretNamespace, cfg.SecretName),
	}
}

// bundleProblem says why a caBundle does not hold the certificate with
// fingerprint want, or "" when it does.
func bundleProblem(bundle []byte, want string) string {
	certs, err := cabundle.Parse(bundle)
	switch {
	case len(strings.TrimSpace(string(bundle))) == 0:
		return "caBundle is empty"
	case err != nil:
		return oneLine("caBundle does not parse: " + err.Error())
	}
	for _, c := range certs {
		if cabundle.Fingerprint(c) == want {
			return ""
		}
	}
	return fmt.Sprintf("caBundle holds %d other certificate(s)", len(certs))
}

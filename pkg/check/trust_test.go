package check_test

import (
	"errors"
	"testing"
	"time"

	"github.com/kyma-project/kim-snatch/pkg/certtest"
	"github.com/kyma-project/kim-snatch/pkg/check"
	"github.com/kyma-project/kim-snatch/pkg/check/checktest"
)

func TestCASecretFailsUnlessItHoldsAValidCA(t *testing.T) {
	now := time.Now()
	runChecklist(t, now, []string{check.IDCASecret}, []checklistCase{
		{
			name:        "secret_missing_fails_and_skips_the_bundle",
			mutate:      func(_ *testing.T, in *checktest.Install) { in.Secret.Name = "other" },
			want:        map[string]check.Status{check.IDCASecret: check.StatusFail, check.IDCABundle: check.StatusSkip},
			wantMessage: map[string][]string{check.IDCASecret: {"Secret kyma-system/kim-snatch-certificates not found"}, check.IDCABundle: {"no usable CA", check.IDCASecret}},
		},
		{
			name:        "ca_key_missing_fails",
			mutate:      func(_ *testing.T, in *checktest.Install) { delete(in.Secret.Data, "ca.crt") },
			want:        map[string]check.Status{check.IDCASecret: check.StatusFail, check.IDCABundle: check.StatusSkip},
			wantMessage: map[string][]string{check.IDCASecret: {"has no key ca.crt (keys: tls.crt, tls.key)"}},
		},
		{
			name:        "ca_garbage_fails",
			mutate:      func(_ *testing.T, in *checktest.Install) { in.Secret.Data["ca.crt"] = []byte("not\na certificate") },
			want:        map[string]check.Status{check.IDCASecret: check.StatusFail, check.IDCABundle: check.StatusSkip},
			wantMessage: map[string][]string{check.IDCASecret: {"is unparsable"}},
		},
		{
			name: "ca_not_a_ca_fails",
			mutate: func(t *testing.T, in *checktest.Install) {
				in.Secret.Data["ca.crt"] = certtest.MustSelfSigned(t, certtest.Options{DNSNames: []string{"leaf"}, NotBefore: now.Add(-time.Hour), NotAfter: now.Add(time.Hour * 24 * 90)}).CertPEM
			},
			want:        map[string]check.Status{check.IDCASecret: check.StatusFail, check.IDCABundle: check.StatusSkip},
			wantMessage: map[string][]string{check.IDCASecret: {"is not-ca", `"CN=leaf"`}},
		},
		{
			name: "ca_expired_fails",
			mutate: func(t *testing.T, in *checktest.Install) {
				in.Secret.Data["ca.crt"] = certtest.MustCA(t, certtest.Options{CommonName: "old", NotBefore: now.Add(-48 * time.Hour), NotAfter: now.Add(-time.Hour)}).CertPEM
			},
			want:        map[string]check.Status{check.IDCASecret: check.StatusFail, check.IDCABundle: check.StatusSkip},
			wantMessage: map[string][]string{check.IDCASecret: {"is expired"}},
		},
		{
			// A valid CA, but not the issuer of the certificate the webhook
			// serves: the syncer does not write it, and says so.
			name: "ca_not_the_issuer_of_tls_crt_fails",
			mutate: func(t *testing.T, in *checktest.Install) {
				in.Secret.Data["ca.crt"] = certtest.MustCA(t, certtest.Options{CommonName: "stranger"}).CertPEM
			},
			want:        map[string]check.Status{check.IDCASecret: check.StatusFail, check.IDCABundle: check.StatusSkip},
			wantMessage: map[string][]string{check.IDCASecret: {"is not-issuer", "tls.crt does not verify against the CA"}},
		},
		{
			name:        "tls_crt_missing_fails",
			mutate:      func(_ *testing.T, in *checktest.Install) { delete(in.Secret.Data, "tls.crt") },
			want:        map[string]check.Status{check.IDCASecret: check.StatusFail, check.IDCABundle: check.StatusSkip},
			wantMessage: map[string][]string{check.IDCASecret: {"is not-issuer", "tls.crt"}},
		},
		{
			name: "ca_expiring_warns_and_the_bundle_is_still_compared",
			mutate: func(t *testing.T, in *checktest.Install) {
				soon := certtest.MustCA(t, certtest.Options{CommonName: "soon", NotBefore: now.Add(-time.Hour), NotAfter: now.Add(71 * time.Hour)})
				in.Secret.Data["ca.crt"], in.Secret.Data["tls.crt"] = soon.CertPEM, soon.CertPEM
				for i := range in.MWC.Webhooks {
					in.MWC.Webhooks[i].ClientConfig.CABundle = append(append([]byte{}, soon.CertPEM...), in.CA.CertPEM...)
				}
			},
			want:        map[string]check.Status{check.IDCASecret: check.StatusWarn},
			wantMessage: map[string][]string{check.IDCASecret: {`CA "soon"`, "in 2d22h", "less than --min-ca-validity 168h0m0s"}},
		},
		{
			name: "newest_of_several_cas_is_current",
			mutate: func(t *testing.T, in *checktest.Install) {
				older := certtest.MustCA(t, certtest.Options{CommonName: "older", NotBefore: now.Add(-30 * 24 * time.Hour), NotAfter: now.Add(60 * 24 * time.Hour)})
				in.Secret.Data["ca.crt"] = append(append([]byte{}, older.CertPEM...), in.CA.CertPEM...)
			},
			wantMessage: map[string][]string{check.IDCASecret: {`CA "snatch-webhook.kyma-system.svc"`, "and 1 older CA(s)"}},
		},
		{
			name:        "secret_read_error_fails_only_that_check",
			react:       deny("get", "secrets", errors.New("connection reset by peer")),
			want:        map[string]check.Status{check.IDCASecret: check.StatusFail, check.IDCABundle: check.StatusSkip},
			wantMessage: map[string][]string{check.IDCASecret: {"could not read Secret kyma-system/kim-snatch-certificates", "connection reset"}},
		},
		{
			name:        "secret_forbidden_skips",
			react:       deny("get", "secrets", forbidden("secrets")),
			want:        map[string]check.Status{check.IDCASecret: check.StatusSkip, check.IDCABundle: check.StatusSkip},
			wantMessage: map[string][]string{check.IDCASecret: {"these credentials may not get Secret kyma-system/kim-snatch-certificates", "forbidden"}},
		},
	})
}

func TestCABundleFailsUnlessEveryEntryTrustsTheCA(t *testing.T) {
	now := time.Now()
	runChecklist(t, now, []string{check.IDCABundle}, []checklistCase{
		{
			name: "bundle_wiped_fails_naming_the_entry",
			mutate: func(_ *testing.T, in *checktest.Install) {
				addLegacyEntry(in)
				in.MWC.Webhooks[0].ClientConfig.CABundle = nil
			},
			// The API server cannot verify the webhook for that entry;
			// ca-bundle says so, and there is nothing to verify with.
			want:        map[string]check.Status{check.IDCABundle: check.StatusFail, check.IDServedCertificate: check.StatusSkip},
			wantMessage: map[string][]string{check.IDCABundle: {"entries without the CA", "(1 of 2): pods.kim-snatch.kyma-project.io (caBundle is empty)"}},
		},
		{
			name: "bundle_with_another_ca_fails",
			mutate: func(t *testing.T, in *checktest.Install) {
				addLegacyEntry(in)
				for i := range in.MWC.Webhooks {
					in.MWC.Webhooks[i].ClientConfig.CABundle = certtest.MustCA(t, certtest.Options{CommonName: "other"}).CertPEM
				}
			},
			// Both are true: the caBundle lacks the Secret's CA, and the
			// replicas' certificates do not verify against it.
			want: map[string]check.Status{check.IDCABundle: check.StatusFail, check.IDServedCertificate: check.StatusFail},
			wantMessage: map[string][]string{
				check.IDCABundle:          {"(2 of 2)", "caBundle holds 1 other certificate(s)"},
				check.IDServedCertificate: {"endpoints serve a certificate that does not verify for snatch-webhook.kyma-system.svc against the caBundle"},
			},
		},
		{
			name: "bundle_with_the_previous_ca_too_passes",
			mutate: func(t *testing.T, in *checktest.Install) {
				for i := range in.MWC.Webhooks {
					in.MWC.Webhooks[i].ClientConfig.CABundle = append(append([]byte{}, in.CA.CertPEM...), certtest.MustCA(t, certtest.Options{CommonName: "previous"}).CertPEM...)
				}
			},
		},
	})
}

func TestServedCertificateFailsWhenAReplicaServesAnotherCA(t *testing.T) {
	now := time.Now()
	runChecklist(t, now, []string{check.IDServedCertificate}, []checklistCase{
		{
			name: "replica_serving_another_ca_fails_naming_it",
			mutate: func(t *testing.T, in *checktest.Install) {
				other := certtest.MustCA(t, certtest.Options{DNSNames: []string{"snatch-webhook.kyma-system.svc"}})
				in.EndpointSlices[1] = checktest.EndpointSlice(in.Service, in.WebhookPods[1].Name, checktest.Serve(t, other.TLSCertificate()))
			},
			want: map[string]check.Status{check.IDServedCertificate: check.StatusFail},
			wantMessage: map[string][]string{check.IDServedCertificate: {
				"1 of 2 endpoints serve a certificate that does not verify for snatch-webhook.kyma-system.svc",
				"(Pod snatch-webhook-5c8d7f9b6-fghij): serial ",
			}},
		},
		{
			name: "replica_serving_the_ca_for_another_name_fails",
			mutate: func(t *testing.T, in *checktest.Install) {
				// The caBundle trusts this certificate, but it does not name
				// the Service, as after a Service was renamed.
				other := certtest.MustCA(t, certtest.Options{DNSNames: []string{"kim-snatch-webhook-service.kyma-system.svc"}})
				for i := range in.MWC.Webhooks {
					in.MWC.Webhooks[i].ClientConfig.CABundle = append(append([]byte{}, in.CA.CertPEM...), other.CertPEM...)
				}
				in.EndpointSlices[0] = checktest.EndpointSlice(in.Service, in.WebhookPods[0].Name, checktest.Serve(t, other.TLSCertificate()))
			},
			want:        map[string]check.Status{check.IDServedCertificate: check.StatusFail},
			wantMessage: map[string][]string{check.IDServedCertificate: {"(Pod snatch-webhook-5c8d7f9b6-abcde)"}},
		},
		{
			name: "endpoint_out_of_reach_warns",
			mutate: func(t *testing.T, in *checktest.Install) {
				in.EndpointSlices[0] = checktest.EndpointSlice(in.Service, in.WebhookPods[0].Name, closedAddr(t))
			},
			want:        map[string]check.Status{check.IDServedCertificate: check.StatusWarn},
			wantMessage: map[string][]string{check.IDServedCertificate: {"1 of 2 endpoints could not be reached from where check runs", "; 1 verify"}},
		},
		{
			// In a Pod of the cluster every Pod address is in reach: only
			// a NetworkPolicy or a dead listener keeps the check out.
			name: "endpoint_out_of_reach_in_the_cluster_fails",
			mutate: func(t *testing.T, in *checktest.Install) {
				in.EndpointSlices[0] = checktest.EndpointSlice(in.Service, in.WebhookPods[0].Name, closedAddr(t))
			},
			config:      func(cfg *check.Config) { cfg.InCluster = true },
			want:        map[string]check.Status{check.IDServedCertificate: check.StatusFail},
			wantMessage: map[string][]string{check.IDServedCertificate: {"1 of 2 endpoints could not be reached from this Pod of the cluster", "; 1 verify"}},
		},
	})
}

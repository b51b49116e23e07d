package syncer

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/kyma-project/kim-snatch/pkg/cabundle"
	"github.com/kyma-project/kim-snatch/pkg/metric"
	"github.com/kyma-project/kim-snatch/pkg/version"
)

// Error reasons of cabundle_syncer_errors_total. The set is closed, so the
// label stays bounded.
const (
	ReasonSecretNotFound        = "secret-not-found"
	ReasonCAKeyMissing          = "ca-key-missing"
	ReasonWebhookConfigNotFound = "webhook-configuration-not-found"
	ReasonReadFailed            = "read-failed"
	ReasonStateInvalid          = "state-invalid"
	ReasonApplyConflict         = "apply-conflict"
	ReasonApplyFailed           = "apply-failed"
)

// errorReasons lists every label value of cabundle_syncer_errors_total, so
// that each series exists from the start and rate() works on the first error.
func errorReasons() [][]string {
	return [][]string{
		{ReasonSecretNotFound}, {ReasonCAKeyMissing}, {string(cabundle.ReasonEmpty)}, {string(cabundle.ReasonUnparsable)},
		{string(cabundle.ReasonNotCA)}, {string(cabundle.ReasonExpired)}, {string(cabundle.ReasonNotIssuer)}, {ReasonWebhookConfigNotFound},
		{ReasonReadFailed}, {ReasonStateInvalid}, {ReasonApplyConflict}, {ReasonApplyFailed},
	}
}

// Metrics are the syncer's metrics; their help texts say what each means. Only
// the leader reconciles, so in_sync, source_valid, ca_not_after_seconds and
// bundle_certificates matter only where is_leader is 1, which alerts join on.
// Every replica's cache holds the MWC and the emergency-disable marker, so
// webhook_configuration_found and emergency_disabled hold on every replica.
type Metrics struct {
	InSync, SourceValid, CANotAfter, BundleCertificates, IsLeader prometheus.Gauge
	WebhookConfigurationFound, EmergencyDisabled                  prometheus.Gauge

	Updates, ApplyEntriesReleased prometheus.Counter
	Errors                        *prometheus.CounterVec
}

// NewMetrics creates the metrics and registers them on reg.
func NewMetrics(reg prometheus.Registerer) (*Metrics, error) {
	m := &Metrics{
		InSync: metric.Gauge("cabundle_syncer_in_sync",
			"1 when every webhook's caBundle equals the bundle built from a valid source, as of the last reconcile."),
		SourceValid: metric.Gauge("cabundle_syncer_source_valid",
			"1 when the CA in the Secret was usable at the last reconcile."),
		Updates: prometheus.NewCounter(prometheus.CounterOpts{Name: "cabundle_syncer_updates_total",
			Help: "Writes to the MutatingWebhookConfiguration: of the caBundle, or of the overlap state alone."}),
		ApplyEntriesReleased: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "cabundle_syncer_apply_entries_released_total",
			Help: "Server-side apply entries of a retired field manager or of an earlier syncer build " +
				"removed from the managedFields of the MutatingWebhookConfiguration, one per manager and removal."}),
		Errors: metric.CounterVec("cabundle_syncer_errors_total",
			"Reconciles that ended in an error or found an invalid source, by reason.",
			[]string{"reason"}, errorReasons()...),
		CANotAfter: metric.Gauge("cabundle_syncer_ca_not_after_seconds",
			"Expiry of the newest CA in the Secret, in Unix seconds."),
		BundleCertificates: metric.Gauge("cabundle_syncer_bundle_certificates",
			"Number of CA certificates in the caBundle built at the last reconcile."),
		IsLeader: metric.Gauge("cabundle_syncer_is_leader",
			"1 while this process holds the leader lease and reconciles."),
		WebhookConfigurationFound: metric.Gauge("cabundle_syncer_webhook_configuration_found",
			"1 while the MutatingWebhookConfiguration exists, as this process's cache holds it; every replica reports it."),
		EmergencyDisabled: metric.Gauge("cabundle_syncer_emergency_disabled",
			"1 while the emergency-disable ConfigMap exists in the Secret's namespace, as this process's cache holds it; "+
				"every replica reports it."),
	}
	err := metric.Register(reg, "syncer", m.InSync, m.SourceValid, m.Updates, m.ApplyEntriesReleased, m.Errors,
		m.CANotAfter, m.BundleCertificates, m.IsLeader, m.WebhookConfigurationFound, m.EmergencyDisabled)
	if err != nil {
		return nil, err
	}
	return m, nil
}

// RegisterBuildInfo registers the gauge cabundle_syncer_build_info.
func RegisterBuildInfo(reg prometheus.Registerer) error {
	return version.RegisterBuildInfo(reg, "cabundle_syncer_build_info", "cabundle-syncer")
}

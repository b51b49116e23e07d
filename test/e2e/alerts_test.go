package e2e

// alertNames are the alerts of deploy/, by the item they watch.
const (
	alertWebhookUnavailable   = "KimSnatchWebhookUnavailable"
	alertFailingOpen          = "KimSnatchWebhookFailingOpen"
	alertSecretInvalid        = "KimSnatchCertificateSecretInvalid"
	alertOutOfSync            = "KimSnatchCABundleOutOfSync"
	alertSyncErrors           = "KimSnatchCABundleSyncErrors"
	alertNoLeader             = "KimSnatchCABundleSyncerNoLeader"
	alertSyncerAbsent         = "KimSnatchCABundleSyncerAbsent"
	alertNoCertificate        = "KimSnatchWebhookNoCertificate"
	alertReloadFailing        = "KimSnatchWebhookCertificateReloadFailing"
	alertConfigurationMissing = "KimSnatchWebhookConfigurationMissing"
	alertDisableInEffect      = "KimSnatchEmergencyDisableInEffect"
	alertPoolHasNoNodes       = "KimSnatchKymaPoolHasNoNodes"
	alertPodsOffPool          = "KimSnatchKymaPodsOffPool"
	// Rollouts that stopped: kube-state-metrics' Progressing condition.
	alertWebhookRolloutStuck = "KimSnatchWebhookRolloutStuck"
	alertSyncerRolloutStuck  = "KimSnatchCABundleSyncerRolloutStuck"
	// Certificates not renewed.
	alertCARenewalOverdue   = "KimSnatchCARenewalOverdue"
	alertCAExpiresSoon      = "KimSnatchCAExpiresSoon"
	alertServingExpiresSoon = "KimSnatchWebhookServingCertificateExpiresSoon"
	// The term objective's budget, burning fast.
	alertTermFastBurn = "KimSnatchTermSLOFastBurn"
	// kube-state-metrics, which many alerts read, missing.
	alertKSMAbsent       = "KimSnatchKubeStateMetricsAbsent"
	alertKSMLabelsAbsent = "KimSnatchKubeStateMetricsLabelsAbsent"
	// The newest run of the in-cluster check failed.
	alertCheckJobFailed = "KimSnatchCheckJobFailed"
	// Targets Prometheus finds and cannot scrape.
	alertWebhookTargetDown = "KimSnatchWebhookTargetDown"
	alertSyncerTargetDown  = "KimSnatchCABundleSyncerTargetDown"
	// The kube-apiserver's view of its calls, and its absence.
	alertCallsSlow              = "KimSnatchWebhookCallsSlow"
	alertAPIServerMetricsAbsent = "KimSnatchAPIServerMetricsAbsent"
	// The Shoot profile's witnesses of a replica serving a foreign
	// certificate, and of Kyma Pods created without the webhook.
	alertDifferentCertificates  = "KimSnatchWebhookReplicasServeDifferentCertificates"
	alertAdmittedWithoutWebhook = "KimSnatchKymaPodsAdmittedWithoutWebhook"
	// The witness of both profiles: the newest Kyma Pod got no review.
	alertMissedByWebhook = "KimSnatchKymaPodMissedByWebhook"
)

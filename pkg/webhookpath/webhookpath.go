// Package webhookpath names the paths snatch-webhook serves the Pod mutation
// on: one home for the webhook's mux and for `cabundle-syncer check`, which
// compares them with the MutatingWebhookConfiguration without linking the
// admission handler.
package webhookpath

const (
	MutatePod = "/mutate-pod"
	// MutatePodLegacy is kim-snatch's old path, kept so that existing
	// MutatingWebhookConfigurations go on working.
	MutatePodLegacy = "/mutate--v1-pod"
)

// Package syncer is the controller of cabundle-syncer: it keeps
// webhooks[*].clientConfig.caBundle of one MutatingWebhookConfiguration in step
// with ca.crt of one Secret, through the pure merge of package cabundle. It
// caches only those two objects and the emergency-disable marker beside the
// Secret (CacheOptions), and keeps the overlap state in StateAnnotation, so
// that a new leader goes on where the last one stopped.
// docs/architecture.md ("cabundle-syncer", "Decision: a JSON patch, not
// server-side apply", "The overlap-state annotation") has the what and why;
// docs/operations.md ("Emergency disable and restore") has the marker.
package syncer

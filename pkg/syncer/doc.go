// Package syncer is the controller of cabundle-syncer: it keeps
// webhooks[*].clientConfig.caBundle of one MutatingWebhookConfiguration in
// step with ca.crt of one Secret, using the pure merge in package cabundle.
//
// It caches only those two objects (CacheOptions) and keeps the merge's
// overlap state in StateAnnotation, not in memory, so a new leader continues
// where the last one stopped. docs/architecture.md ("cabundle-syncer",
// "Decision: a JSON patch, not server-side apply" and "The overlap-state
// annotation") says what it writes, and why.
package syncer

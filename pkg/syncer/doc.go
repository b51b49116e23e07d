// Package syncer is the controller of cabundle-syncer: it keeps
// webhooks[*].clientConfig.caBundle of one MutatingWebhookConfiguration in
// step with ca.crt of one Secret, using the pure merge in package cabundle.
//
// It caches only those two objects (CacheOptions) and keeps no state in
// memory: the merge's overlap state lives in StateAnnotation, so a new
// leader continues where the last one stopped. It never creates or deletes
// the MutatingWebhookConfiguration and never writes a bundle from an
// invalid source; it reports through a Warning Event, the metrics and the
// log instead. It writes a JSON patch conditional on the resourceVersion it
// read (docs/architecture.md, "Decision: a JSON patch, not server-side
// apply"); the annotation's format versions are in the same document
// ("The overlap-state annotation").
package syncer

// Package syncer is the controller of cabundle-syncer: it keeps
// webhooks[*].clientConfig.caBundle of one MutatingWebhookConfiguration in
// step with ca.crt of one Secret, using the pure merge in package cabundle.
//
// The reconciler reads both objects from a cache that holds exactly those two
// objects (see CacheOptions), calls cabundle.Merge, and writes with
// server-side apply under its own field manager only when the result differs
// from what is in place. It keeps no state in memory: the overlap state of
// the merge lives in an annotation on the MutatingWebhookConfiguration, so a
// restart or a new leader continues where the last one stopped.
//
// It never writes a bundle from an invalid source. A missing Secret, a
// missing key, an empty, unparsable, non-CA or expired ca.crt leave the
// caBundle as it is and are reported through a Warning Event, the metrics
// and the log. It never creates or deletes the MutatingWebhookConfiguration.
package syncer

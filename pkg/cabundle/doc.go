// Package cabundle is the pure core of cabundle-syncer: from the CA in the
// certificate Secret, the serving certificate it must verify there, the
// caBundle in the MutatingWebhookConfiguration and a clock, it builds the
// caBundle to write and a verdict on the source, keeping each previous CA for
// a bounded overlap (docs/architecture.md, "CA rotation"). It logs nothing,
// calls no API server and reads no clock: the time and the overlap state go
// in and out as values.
package cabundle

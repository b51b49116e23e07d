// Package cabundle is the pure core of cabundle-syncer: it turns the CA found
// in the certificate Secret, the caBundle found in the
// MutatingWebhookConfiguration and a clock into the caBundle to write and a
// verdict on the source. Merge keeps every previous CA for a bounded overlap
// after it left the source (docs/architecture.md, "CA rotation"). Nothing
// here logs, talks to the API server or reads the wall clock: the time and
// the overlap state go in and out as values.
package cabundle

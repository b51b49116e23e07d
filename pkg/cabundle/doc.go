// Package cabundle is the pure core of cabundle-syncer: it turns the CA found
// in the certificate Secret, the caBundle found in the
// MutatingWebhookConfiguration and a clock into the caBundle to write and a
// verdict on the source.
//
// Every renewal of Gardener's self-signed certificate is a CA rotation, and
// the webhook Pods serve the new certificate about a minute after the
// syncer writes the new CA. Merge therefore keeps every previous CA for a
// bounded overlap after it left the source (docs/architecture.md, "CA
// rotation"), and prunes expired certificates. Nothing here logs, talks to
// the API server or reads the wall clock: the time and the overlap state go
// in and out as values.
package cabundle

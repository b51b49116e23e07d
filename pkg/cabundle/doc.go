// Package cabundle is the pure core of cabundle-syncer: it turns the CA found
// in the certificate Secret, the caBundle found in the
// MutatingWebhookConfiguration and a clock into the caBundle to write and a
// verdict on the source.
//
// Gardener's self-signed issuer makes every renewal a CA rotation: ca.crt ==
// tls.crt, with a new key. Kubelet updates the files mounted into the webhook
// Pods about a minute after the Secret changes, while the syncer updates the
// MutatingWebhookConfiguration within a second. A bundle that held only the
// newest CA would leave the API server unable to verify the webhook for that
// minute, and with failurePolicy Ignore Pods would be admitted silently
// without the affinity. Merge therefore keeps every previous CA for a bounded
// overlap after it left the source, and prunes expired certificates.
//
// Nothing here logs, talks to the API server or reads the wall clock: the
// caller passes the time in, and the state that must survive restarts (when
// each CA was first seen and when it was superseded) goes in and out as a
// value, so that the caller can keep it in the cluster.
package cabundle

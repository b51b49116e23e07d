// Package logkeys holds the keys of the structured log lines of both
// binaries.
//
// Operators grep and alert on these keys, and docs/operations.md lists them,
// so they are a contract like the metric names: a key is added here, used
// through its constant, and never renamed. A test in test/docs checks that
// every key the documentation names is one of these constants.
//
// Every decision of snatch-webhook is one line with the message
// "Admission decision" and the keys Outcome, Reason, Namespace, Pod and UID.
// Every sync of cabundle-syncer is one line whose message starts with
// "caBundle", with the keys Outcome, Reason (when not written), Secret,
// WebhookConfiguration, Certificates and Fingerprints.
package logkeys

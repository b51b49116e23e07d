// Package syncertest holds the fixtures and waits shared by the tests of
// package syncer and of the cabundle-syncer command: CA certificates, the
// certificate Secret, a MutatingWebhookConfiguration as the webhook's
// manifests create it, and helpers that watch it change.
//
// It is imported by tests only.
package syncertest

// Package syncertest holds the fixtures and waits shared by the tests of
// package syncer and of the cabundle-syncer command: the certificate
// Secret, a MutatingWebhookConfiguration as the webhook's manifests create
// it, and helpers that watch it change. The certificates come from
// pkg/certtest.
//
// It is imported by tests only.
package syncertest

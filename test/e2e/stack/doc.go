// Package stack names the installation of deploy/ in a cluster, and holds
// what the end-to-end suite, the migration scenario and `make run` need to
// reach it: the names deploy/ gives its objects, the neighbours deploy/
// needs and the monitoring stack, waits for Gardener cert-management, the
// caBundle and the webhook, the API server's fail-open count, and
// deploy/webhook's MutatingWebhookConfiguration as kustomize renders it.
package stack

// Package migration runs docs/migration.md, step by step and as written,
// from the old single-binary kim-snatch to KIM Snatch and back, while Pods
// are created at a steady rate, and counts what the webhooks did to every
// Pod (migration_test.go). It stops the migration after steps 3, 4 and 5
// and rolls back from there, then migrates completely and rolls back. The
// release files the guide applies are rendered by hack/release.sh
// --manifests from bases that run the local images (workspace_test.go).
//
// It runs on the real node of test/realnode: kubectl's Deployments start
// the images of `make images` in containerd, the real kubelet projects the
// Secret into them, and kube-proxy carries the API server's calls to the
// webhooks' Services. The old kim-snatch runs as the container of
// test/e2e/kimsnatch/cmd/kim-snatch, and Gardener cert-management, built
// from its module, as a container too. Without the node's prerequisites the
// scenario is skipped, and fails in CI.
package migration

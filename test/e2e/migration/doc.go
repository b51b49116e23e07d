// Package migration runs both paths from the old single-binary kim-snatch
// to KIM Snatch and back, while Pods are created at a steady rate, and
// counts what the webhooks did to every Pod: docs/migration.md's manual
// steps as written, aborted after steps 3, 4 and 5 and then whole
// (migration_test.go), and its fleet path "Through lifecycle-manager",
// the module versions applied by the stand-in of test/e2e/klm
// (fleet_test.go). hack/release/release.sh renders the release files from bases
// that run the local images (workspace_test.go).
//
// It runs on the real node of test/realnode: the images of `make images`
// run in containerd, the real kubelet projects the Secret into them, and
// kube-proxy carries the API server's calls to the webhooks' Services. The
// old kim-snatch runs as test/e2e/kimsnatch/cmd/kim-snatch. Without the
// node's prerequisites the scenarios are skipped, and fail in CI.
package migration

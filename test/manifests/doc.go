// Package manifests tests what ships besides the code: the kustomize bases
// in deploy/, the cert-manager and descheduler examples, the PrometheusRules
// and the container images' build.
//
// The bases are rendered with the kustomize embedded in kubectl (bin/ from
// `make tools`) and checked in three ways: by reading the rendered objects,
// by a real kube-apiserver (server-side dry-run with strict field
// validation, Pod Security admission, the webhook configuration's selectors,
// and the syncer's RBAC through SubjectAccessReviews), and, for the alerts,
// by Prometheus' own rule parser and rule engine built from
// hack/tools/promrules: rule unit tests in testdata/rules fire each alert on
// the series of its broken item and keep it silent on healthy ones. The
// descheduler policy is decoded with the descheduler's own types
// (hack/tools/descheduler). The image tests run hack/build-binary.sh, which
// both Dockerfiles call, and inspect the binaries it produces; they also read
// back the archives of `make images` (bin/images, or $SNATCH_IMAGES) and hold
// their config and layer to the Dockerfiles' final stages. The code under cmd/ and pkg/ that goes
// into them imports no test helper package (test/, pkg/certtest and the
// other pkg/.../<subject>test packages).
package manifests

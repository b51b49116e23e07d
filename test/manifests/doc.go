// Package manifests tests what ships besides the code: the kustomize bases
// in deploy/, the cert-manager and descheduler examples, the PrometheusRules
// and dashboards, the release script and the container images' build.
//
// The bases are rendered with the kustomize embedded in kubectl and checked
// by reading the rendered objects and by a real kube-apiserver (strict
// server-side dry-run, Pod Security admission, the webhook configuration's
// selectors, RBAC through SubjectAccessReviews). The alerts run through
// Prometheus' own rule engine (hack/tools/promrules), the descheduler policy
// through the descheduler's types (hack/tools/descheduler-policy). The image tests
// run hack/build/build-binary.sh and read back the archives of `make images`.
// Code under cmd/ and pkg/ imports no test helper package.
package manifests

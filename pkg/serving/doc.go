// Package serving runs snatch-webhook's listeners, each on its own address: the
// webhook over TLS, the probes and the metrics, and the certificate watcher
// that keeps the last good pair served. docs/architecture.md ("Decision: our
// own TLS server and certificate watcher") says why this is not
// controller-runtime's; deps_test.go keeps the webhook free of client-go.
package serving

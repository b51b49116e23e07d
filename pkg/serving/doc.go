// Package serving runs snatch-webhook's listeners, each on its own address:
// the webhook over TLS, the probes and the metrics.
//
// The certificate watcher starts before the files exist, reloads on file
// events and by polling, and keeps serving the last good pair when a load
// fails; /readyz fails until a pair has loaded and during a shutdown. A
// shutdown first keeps serving with each connection closed after its
// response, then drains in-flight requests.
//
// docs/architecture.md ("Decision: our own TLS server and certificate
// watcher") says why this is not controller-runtime's; deps_test.go keeps
// the webhook free of client-go.
package serving

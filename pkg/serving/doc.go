// Package serving runs snatch-webhook's listeners: the webhook over TLS,
// the probes and the metrics, each over its own address.
//
//   - TLS 1.2 or newer, with the certificate from a CertWatcher that
//     watches the certificate directory (surviving kubelet's ..data symlink
//     swap), polls as a fallback, and keeps the last good pair when a new
//     one cannot be loaded.
//   - HTTP/2 only when asked for; header, read, write and idle timeouts.
//   - /healthz answers while the process runs; /readyz fails until a
//     certificate has loaded and the webhook listener accepts, and again
//     once shutdown begins.
//   - On shutdown, in-flight admission requests are drained before the
//     listeners close.
//
// The certificate metrics (snatch_webhook_serving_cert_not_after_seconds,
// snatch_webhook_cert_reloads_total{result}) live in metrics.go and are
// registered on a registry passed in.
package serving

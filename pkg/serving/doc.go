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
//
// # Why not controller-runtime's certwatcher
//
// sigs.k8s.io/controller-runtime/pkg/certwatcher would do the watching: it
// watches the two files, re-adds a file's watch when kubelet's ..data swap
// removes the old one, polls every 10 s and keeps the last good pair. But
// it costs the webhook about 7.5 MiB, 40 to 48% more RSS under load. It
// imports its metrics package, which imports controller-runtime's global
// metrics registry and with it client-go: the clientset, the informers and
// the scheme of every API group, whose registrations run at start. Without
// it the webhook links no client-go at all; it needs no API access.
//
// Measured on 2026-11-25 with `make bench`, section [webhook], both builds
// back to back on the same two shared cores, the only difference a blank
// import of the certwatcher package in cmd/snatch-webhook: RSS under load
// went from 15.9 to 19.2 MiB to 23.5 to 26.8 MiB (+7.4 to +8.0 MiB in every
// cell), over the target of 20 MiB (docs/benchmarks.md). The binary linked
// 541 packages outside the standard library instead of 140 and grew from
// 15.6 to 26.0 MB; package initialisation (GODEBUG=inittrace=1) went from
// 2.6 ms and 0.6 MiB allocated to 5.6 ms and 2.0 MiB.
// TestDependencies_library_watcher_links_client_go_and_the_webhook_does_not
// (deps_test.go) keeps that reason true: it fails when the library's
// watcher stops linking client-go, and when the webhook links it anyway.
//
// Nor would the library carry alone what operators rely on.
// certwatcher.New fails while the files are missing, as when a Pod starts
// before its Secret is mounted. A failed load is counted only in
// controller-runtime's global certwatcher_read_certificate_errors_total and
// logged through its global logger, so neither
// snatch_webhook_cert_reloads_total{result="error"}, which the alert
// KimSnatchWebhookCertificateReloadFailing reads, nor the line "Cannot load
// the serving certificate" would see it without a second reader of the
// files.
//
// So CertWatcher (certwatcher.go) does the job in one loop. It watches the
// directories rather than the files: kubelet's rename of ..data_tmp over
// ..data is an event there, and the loop groups the burst of one update
// into a single load. The tests that show what it does:
//
//   - TestServer_serves_a_kubelet_style_rotation: a ..data swap is served
//     on file events alone (the poll is an hour), and the metrics follow.
//   - TestServer_keeps_the_last_good_pair: a mismatched key, a half-written
//     certificate or a missing key is refused and counted as
//     result="error"; the last good pair is served and the replica stays
//     ready; the next good pair is served.
//   - TestServer_not_ready_until_the_files_appear: no handshake and a
//     failing /readyz until the files exist, then the pair is served.
//   - TestServer_picks_up_a_directory_created_later_by_polling: a
//     directory that did not exist at start is found by the poll and then
//     watched.
//   - TestCertWatcher_logs_loads_with_stable_keys: the lines "Serving
//     certificate loaded" and "Cannot load the serving certificate" and
//     their keys.
//
// # Why not controller-runtime's webhook server
//
// sigs.k8s.io/controller-runtime/pkg/webhook links client-go as well, and
// starts the certwatcher above itself. It also fits badly: it offers
// HTTP/2 unless a TLS option removes it, sets no read or write timeout,
// drains for a fixed minute with no phase that retires kept-alive
// connections, and its StartedChecker passes while the listener completes a
// handshake, so it cannot fail readiness while a shutdown delay keeps
// serving. Our handler is a plain http.Handler (package admission says
// why), so its admission machinery would go unused. Server (server.go) is
// net/http with our settings; the tests that show them:
//
//   - TestServer_protocols: TLS 1.1 refused, 1.2 accepted, HTTP/2 only when
//     enabled.
//   - TestServer_drains_in_flight_requests_on_shutdown: readiness fails at
//     once, an in-flight request is answered, then the listener closes.
//   - TestServer_retires_kept_alive_connections_during_the_shutdown_delay:
//     during ShutdownDelay every response closes its connection.
//   - TestServer_metrics_endpoint: the certificate metrics on /metrics.
package serving

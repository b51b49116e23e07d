// Package serving runs snatch-webhook's listeners, each on its own address:
// the webhook over TLS, the probes and the metrics.
//
// # Why not controller-runtime's certwatcher and webhook server
//
// Both link client-go: the certwatcher's metrics package links
// controller-runtime's global registry, and with it the clientset, the
// informers and every API group's scheme, registered at start. Without them
// the webhook links no client-go. Measured on 2026-11-25 with `make bench`,
// section [webhook], back to back on the same two shared cores, the only
// difference a blank import of the certwatcher in cmd/snatch-webhook: RSS
// under load went from 15.9-19.2 MiB to 23.5-26.8 MiB (+7.4 to +8.0 MiB in
// every cell, over the 20 MiB target of docs/benchmarks.md), packages
// linked outside the standard library from 140 to 541, the binary from 15.6
// to 26.0 MB, package initialisation (GODEBUG=inittrace=1) from 2.6 ms and
// 0.6 MiB to 5.6 ms and 2.0 MiB. deps_test.go fails when the library's
// watcher stops linking client-go, or when the webhook links it anyway.
//
// Nor do they do what operators rely on. certwatcher.New fails while the
// files are missing (a Pod started before its Secret is mounted), and a
// failed load reaches only controller-runtime's global logger and
// certwatcher_read_certificate_errors_total, neither MsgCertificateLoadFailed
// nor snatch_webhook_cert_reloads_total{result="error"} (alert
// KimSnatchWebhookCertificateReloadFailing). The webhook server offers
// HTTP/2 unless a TLS option removes it, sets no read or write timeout,
// drains for a fixed minute without retiring kept-alive connections, and
// its StartedChecker passes while the listener handshakes, so readiness
// cannot fail during a shutdown delay. Our handler is a plain http.Handler
// (package admission says why).
//
// # Tests of the kept behaviours
//
//   - reload on file events alone, and by the poll:
//     TestServer_serves_a_kubelet_style_rotation,
//     TestServer_picks_up_a_directory_created_later_by_polling
//   - the last good pair kept: TestServer_keeps_the_last_good_pair
//   - not ready until a certificate is served:
//     TestServer_not_ready_until_the_files_appear
//   - shutdown: TestServer_drains_in_flight_requests_on_shutdown,
//     TestServer_retires_kept_alive_connections_during_the_shutdown_delay
//   - TLS 1.2 or newer, HTTP/2 only when enabled: TestServer_protocols
//   - metrics and logs: TestServer_metrics_endpoint,
//     TestCertWatcher_logs_loads_with_stable_keys,
//     TestErrorLog_routes_net_http_messages
package serving

// Package admission serves the Pod mutation as a plain http.Handler on
// /mutate-pod and kim-snatch's old path /mutate--v1-pod.
//
// # Why not controller-runtime's admission.Webhook
//
// This handler runs on every Pod creation in every Kyma cluster.
// controller-runtime's webhook decodes the whole AdmissionReview and Pod and
// diffs the re-encoded Pod to build the patch: on a realistic review, almost
// all of the work. This package keeps the contract (v1 AdmissionReview, uid
// echoed, content type and size checked, a clear 4xx for malformed input)
// but reads only the fields the decision needs and answers with the patch
// the affinity package prebuilt, in a response appended by hand.
//
// # Why a token walk, and whose tokenizer
//
// The lexing is github.com/go-json-experiment/json/jsontext's, the upstream
// of the standard library's encoding/json/v2: it validates UTF-8, rejects
// duplicate member names (which a hand-written lexer merged) and bounds
// nesting. Our code (walk.go, review.go) descends into the members the
// decision needs and skips every other value with SkipValue, which
// validates without building anything: managedFields, containers and status
// never become Go values.
//
// The strongest simple alternative is encoding/json into a struct of just
// those fields. BenchmarkHandler (handler_bench_test.go, also in `make
// bench`) runs both, and controller-runtime's generic handler, on the same
// reviews and checks that they produce the same patch. On 2026-11-24,
// GOMAXPROCS=1, two shared cores: the walk took 15 to 19 µs for the 5.5 KB
// review and 25 to 27 µs for the 8.8 KB one with managedFields, 224 B and 9
// allocations (35 B and 3 since 2026-11-26, at the same speed); the narrow
// struct 69 to 70 µs and 103 to 118 µs, 20 to 29 KB and about 90
// allocations. FuzzDecode holds the walk to encoding/json.
//
// # Never a denial
//
// Every well-formed review is allowed, with or without a patch; an internal
// error or a panic is allowed without a patch (reason "error"). Malformed
// HTTP input gets a 4xx with a message: the API server counts that as a
// failed call, and the webhook's failurePolicy Ignore admits the Pod. Every
// request is counted in snatch_webhook_admission_total{outcome,reason} and
// snatch_webhook_admission_duration_seconds, and logged in one line
// (MsgDecision).
package admission

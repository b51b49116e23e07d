// Package admission serves the Pod mutation as a plain http.Handler on
// /mutate-pod and kim-snatch's old path /mutate--v1-pod.
//
// # Why not controller-runtime's admission.Webhook
//
// This handler runs on every Pod creation in every Kyma cluster, so its cost
// is paid cluster-wide. controller-runtime's webhook decodes the whole
// AdmissionReview, the whole Pod, and diffs the re-encoded Pod to build the
// patch; on a realistic review that generic machinery is almost all of the
// work. This package keeps the same contract (v1 AdmissionReview, uid
// echoed, content type and size checked, a clear 4xx for malformed input)
// but reads only the fields the decision needs, in place, by walking over
// the rest of the JSON without building it, and answers with a patch that
// the affinity package prebuilt. BenchmarkHandler in handler_bench_test.go
// runs both on the same reviews; FuzzDecode holds the decoder to
// encoding/json.
//
// # Never a denial
//
// Every well-formed review is allowed, with or without a patch; an internal
// error or a panic is allowed without a patch (reason "error"). Malformed
// HTTP input gets a 4xx with a message: the API server counts that as a
// failed call, and the webhook's failurePolicy Ignore admits the Pod.
//
// Every request is counted in snatch_webhook_admission_total{outcome,reason}
// and snatch_webhook_admission_duration_seconds, and logged in one line
// with the message "Admission decision" (MsgDecision) and the keys of
// package logkeys: outcome, reason, namespace, pod, uid.
package admission

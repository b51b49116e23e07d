// Package admission serves the Pod mutation as a plain http.Handler on
// /mutate-pod and kim-snatch's old path /mutate--v1-pod.
//
// It keeps the contract of an admission webhook (a v1 AdmissionReview, the
// uid echoed, the content type and size checked, a 4xx with a message for
// malformed input) and reads only the fields the decision needs, with
// jsontext's tokenizer, answering with the patch package affinity prebuilt.
// It never denies: a well-formed review is allowed, with or without a
// patch, and an internal error or a panic is allowed without one (reason
// "error"). Every request is counted and logged in one line (MsgDecision).
//
// docs/architecture.md ("Decision: a token walk, not controller-runtime's
// admission.Webhook") says why; BenchmarkHandler holds the reason true.
package admission

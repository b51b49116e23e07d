// Package admission serves the Pod mutation as a plain http.Handler on
// /mutate-pod and kim-snatch's old path /mutate--v1-pod. It keeps the contract
// of an admission webhook but reads only the fields the decision needs, with
// jsontext's tokenizer, and answers with the patch package affinity prebuilt:
// docs/architecture.md ("Decision: a token walk, not controller-runtime's
// admission.Webhook") says why, and BenchmarkHandler holds the reason true. It
// never denies (a panic or an internal error is allowed without a patch), and
// logs and counts every request in one line (MsgDecision).
package admission

// Package affinity is the pure core of snatch-webhook: it decides whether a
// Pod gets the preferred node affinity term for the Kyma worker pool, and
// builds the JSON patch that adds it. It does no I/O and knows nothing of
// HTTP, logging or metrics, so the decision is tested from golden Pods
// alone and "snatch-webhook mutate" runs it exactly as the webhook does.
//
// [Mutator.Decide] follows the decision order of docs/architecture.md
// ("Admission decision order"): a bound or mirror Pod, then the opt-out
// label (kim-snatch.kyma-project.io/opt-out: "true", no other value), then
// a pool key the Pod already uses, each leave the Pod alone; otherwise the
// patch only adds the term, creating affinity, nodeAffinity or the list
// only where they are absent.
package affinity

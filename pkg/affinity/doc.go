// Package affinity is the pure core of snatch-webhook: it decides whether a Pod
// gets the preferred node affinity term for the Kyma worker pool, and builds
// the JSON patch that adds it. It does no I/O and knows nothing of HTTP,
// logging or metrics, so the decision is tested from golden Pods alone and
// "snatch-webhook mutate" runs it exactly as the webhook does. [Mutator.Decide]
// follows docs/architecture.md ("Admission decision order").
package affinity

// Package affinity is the pure core of snatch-webhook: it decides whether a
// Pod gets the preferred node affinity term for the Kyma worker pool, and
// builds the JSON patch that adds it. It does no I/O and knows nothing of
// HTTP, logging or metrics, so the decision is tested from golden Pods
// alone and "snatch-webhook mutate" runs it exactly as the webhook does.
//
// # Decision order
//
// The admission layer answers the request-level questions (is it a Pod, is
// it a CREATE) with [ReasonNotPod] and [ReasonNotCreate]. For a Pod,
// [Mutator.Decide] then applies, in this order:
//
//  1. spec.nodeName is set, or the Pod is a mirror Pod (annotation
//     kubernetes.io/config.mirror): no patch, [ReasonAlreadyScheduled].
//  2. The Pod carries the opt-out label: no patch, [ReasonOptedOut].
//  3. The Pod already says something about the pool label key, through
//     spec.nodeSelector, a required node affinity term or a preferred one:
//     no patch, [ReasonAlreadySet]. This makes the mutation idempotent and
//     leaves the user's own choice alone.
//  4. Otherwise a patch that only adds the preferred term, creating
//     affinity, nodeAffinity or the list only where they are absent:
//     [ReasonInjected].
//
// # Opt-out
//
// A Pod opts out with the label kim-snatch.kyma-project.io/opt-out: "true";
// no other value counts. The MutatingWebhookConfiguration's objectSelector
// excludes the same label so that such Pods are normally not even sent to
// the webhook; the check here covers configurations without it.
package affinity

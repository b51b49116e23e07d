// Package check is the operators' health checklist of kim-snatch as code:
// `cabundle-syncer check` runs it once against a cluster and prints one
// line per item.
//
// Each check answers one question an operator asks when Pods in Kyma
// namespaces land on customer nodes: are the webhook replicas ready
// (webhook-pods), does a syncer lead (syncer-lease), is the CA in the
// Secret usable and not about to expire (ca-secret), is the
// MutatingWebhookConfiguration shaped so that the API server calls the
// webhook for Kyma Pods (webhook-configuration), does every entry trust the
// current CA (ca-bundle), can the API server reach the Service each entry
// names (webhook-endpoints), does every ready replica serve a certificate
// that verifies against the caBundle, dialled as the API server dials it
// (served-certificate), does the pool the webhook's term prefers exist and
// have room (kyma-pool), where do the Kyma Pods actually run (placement:
// the outcome), and, on request, are Pods of a given namespace sent to the
// webhook at all (namespace).
//
// The checks are independent: an API error, a missing object or a broken
// item fails exactly the check that owns it. The exceptions need what
// another check owns: ca-bundle compares the Secret's CA with the
// caBundle, served-certificate verifies with the caBundle at the endpoints
// that webhook-endpoints found; when what they need is unusable they are
// skipped with the reason instead of failing a second time for the same
// fault.
//
// Nothing here writes to the cluster. served-certificate is the one check
// that talks to anything but the API server: it completes a TLS handshake
// with each endpoint and sends nothing.
//
// Every decision that the API server makes (does a namespaceSelector select
// a namespace, do the rules match a Pod CREATE) is evaluated with the API
// server's own label selector code, never by comparing strings. Nothing here
// logs or exits; the command turns a Report into output and an exit code.
package check

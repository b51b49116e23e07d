// Package check is the operators' health checklist of kim-snatch as code:
// `cabundle-syncer check` runs it once against a cluster and prints one
// line per item. docs/operations.md ("Checks") lists the items and the
// question each answers.
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

// Package check is the operators' health checklist of kim-snatch as code:
// `cabundle-syncer check` runs it once against a cluster and prints one
// line per item. docs/operations.md ("Checks") lists the items.
//
// The checks are independent: an API error or a broken item fails exactly
// the check that owns it, and a check that needs what another found
// unusable is skipped with the reason. Nothing here writes to the cluster,
// logs or exits; served-certificate completes a TLS handshake with each
// endpoint and sends nothing. Selectors are matched by the API server's code.
// Each item's decision returns its status and facts; the words it prints
// come from one catalogue by item ID and finding (words.go).
package check

// Package patch holds the operation of an RFC 6902 JSON patch, as both
// binaries write it: snatch-webhook's affinity patch and cabundle-syncer's
// caBundle patch.
package patch

// Operation is one operation of a JSON patch. Value is encoded even when nil:
// "add" and "replace" need it.
type Operation struct {
	Op    string `json:"op"`
	Path  string `json:"path"`
	Value any    `json:"value"`
}

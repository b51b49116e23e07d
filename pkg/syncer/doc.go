// Package syncer is the controller of cabundle-syncer: it keeps
// webhooks[*].clientConfig.caBundle of one MutatingWebhookConfiguration in
// step with ca.crt of one Secret, using the pure merge in package cabundle.
// It reads both objects from a cache that holds only those two (see
// CacheOptions) and keeps no state in memory: the overlap state of the merge
// lives in StateAnnotation, so a restart or a new leader continues where the
// last one stopped. It never creates or deletes the
// MutatingWebhookConfiguration, and never writes a bundle from an invalid
// source: a missing Secret or key, an empty, unparsable, non-CA or expired
// ca.crt leave the caBundle as it is and are reported through a Warning
// Event, the metrics and the log.
//
// # The write: a JSON patch, not server-side apply
//
// The syncer writes only what differs, as a JSON patch (an Update) under
// FieldManager, which the API server records as owning only the leaves it
// changed: the caBundles and the annotation, nothing that keeps a webhook
// entry alive (docs/architecture.md). An apply has to name each entry by its
// key, which makes the applier a co-owner of the entry; a deployer that
// applies server-side and renames or removes the entry is then refused, even
// with force, because the entry would be left as {name, caBundle}, which
// fails validation. Earlier builds applied; the leader removes their Apply
// entry once (see releaseApplyEntry).
//
// Every patch first replaces metadata.resourceVersion with the value read, so
// the API server writes only if the object is still at that version and
// answers 409 Conflict otherwise (a `test` operation would fail as 422
// Invalid, which cannot be told from a wrong patch). The merge takes the
// previous CAs from the caBundles in place and the patch addresses entries
// by index, so a write based on a stale read could drop a CA that another
// write added, or land on another entry than the one compared. A patch never
// creates an object: a deleted one answers 404, a re-created one has another
// resourceVersion.
//
// # The overlap-state annotation
//
// StateAnnotation is what one release hands to the next or, on a rollback,
// the previous one, so it carries a format version (docs/releasing.md). The
// syncer writes StateFormatVersion and reads every version ever written, each
// held to by a golden file testdata/ca-state-v<N>.json:
//
//	v1: {"v":1,"cas":{"<sha256>":{"firstSeen":"2026-03-01T12:00:00Z","supersededAt":"2026-05-01T09:30:01Z"}}}
//	v0: {"<sha256>":{"firstSeen":"2026-03-01T12:00:00Z","supersededAt":"2026-05-01T09:30:01Z"}}
//
// Version 0, written before the format was versioned, is version 1's "cas"
// alone; "v" is not a fingerprint. There is one record per CA in the bundle,
// keyed by the lowercase hex SHA-256 of its DER encoding; supersededAt is
// absent while the CA is in the Secret; times are RFC 3339 in UTC, to the
// second. A value the syncer cannot read, a newer version among them (as for
// a version 0 syncer reading version 1), is reported as state-invalid and not
// guessed at: every previous CA then starts a full overlap, longer, never
// shorter, and the next write replaces the value. A change that an older
// reader would misread, rather than fail to read, needs a new version.
package syncer

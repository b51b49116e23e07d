// Package syncer is the controller of cabundle-syncer: it keeps
// webhooks[*].clientConfig.caBundle of one MutatingWebhookConfiguration in
// step with ca.crt of one Secret, using the pure merge in package cabundle.
//
// The reconciler reads both objects from a cache that holds exactly those two
// objects (see CacheOptions), calls cabundle.Merge, and only when the result
// differs from what is in place writes it with a JSON patch, conditional on
// the resourceVersion it read, under its own field manager (see
// caBundlePatch). The API server records that Update as owning only the
// leaves it changed, so the syncer never stands in the way of a deployer that
// adds, renames or removes webhook entries, server-side or not. Earlier
// builds wrote with server-side apply; the leader removes their Apply entry
// from managedFields once (see releaseApplyEntry). It keeps no state in
// memory: the overlap state of the merge lives in an annotation on the
// MutatingWebhookConfiguration, so a restart or a new leader continues where
// the last one stopped.
//
// It never writes a bundle from an invalid source. A missing Secret, a
// missing key, an empty, unparsable, non-CA or expired ca.crt leave the
// caBundle as it is and are reported through a Warning Event, the metrics
// and the log. It never creates or deletes the MutatingWebhookConfiguration.
//
// # The overlap-state annotation
//
// StateAnnotation is the one piece of data that one release of the syncer
// hands to the next (and, on a rollback, to the previous one), so its value
// carries a format version. The syncer writes StateFormatVersion and reads
// every version ever written; pkg/syncer/testdata holds one golden value per
// version, ca-state-v<N>.json, and the tests hold the syncer to reading each
// into the same state and to writing the current one byte for byte.
//
// Version 1, written since the format is versioned:
//
//	{"v":1,"cas":{"<sha256>":{"firstSeen":"2026-03-01T12:00:00Z","supersededAt":"2026-05-01T09:30:01Z"}}}
//
// Version 0, unversioned, written by the builds before: the map of version
// 1's "cas" on its own.
//
//	{"<sha256>":{"firstSeen":"2026-03-01T12:00:00Z","supersededAt":"2026-05-01T09:30:01Z"}}
//
// A reader tells them apart by the key "v": version 0 has only fingerprints
// as keys, and "v" is not one. In both there is one record per CA in the
// bundle, keyed by the lowercase hex SHA-256 fingerprint of its DER encoding;
// supersededAt is absent while the CA is in the Secret; times are RFC 3339
// in UTC, to the second.
//
// A value the syncer cannot read, a newer version among them, is reported
// (reason state-invalid) and not guessed at: every previous CA in the bundle
// then starts a full overlap, which keeps it longer, never shorter, and the
// next write replaces the value with StateFormatVersion. A syncer of
// version 0 reads a version 1 value the same way. A change that an older
// reader would misread, rather than fail to read, needs a new version.
package syncer

package stack

// SyncerServiceAccount is the ServiceAccount of deploy/syncer, in
// Namespace.
const SyncerServiceAccount = "cabundle-syncer"

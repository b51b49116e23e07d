// Package logkeys holds the keys of the structured log lines of both
// binaries. Operators grep and alert on them, so they are a contract like the
// metric names: a key is added here, used through its constant, and never
// renamed. docs/operations.md ("Logs") says what each holds and which lines
// carry it; a test in test/docs checks that it names exactly these.
package logkeys

const (
	// Keys of both binaries.
	Outcome = "outcome" // what happened, e.g. patched or written
	Reason  = "reason"  // why, as the metric label of the same name
	Detail  = "detail"  // a sentence that explains Reason
	Error   = "error"   // zapr writes it on every line at error level
	Version = "version" // the binary's version, at startup

	// Keys of snatch-webhook's admission decisions.
	Namespace = "namespace"
	Pod       = "pod" // the name, or generateName followed by "*"
	UID       = "uid" // the AdmissionReview's uid, which the API server logs too
	DryRun    = "dryRun"
	Status    = "status" // the HTTP status of a malformed request's answer
	// Suppressed counts, on a malformed request's line, the malformed lines
	// left out since the last one logged.
	Suppressed = "suppressed"

	// Keys of snatch-webhook's serving certificate.
	Serial       = "serial"
	Subject      = "subject"
	NotAfter     = "notAfter"     // RFC 3339 in UTC
	Fingerprint  = "fingerprint"  // lowercase hex SHA-256 of the DER: openssl's -fingerprint without colons
	KeptPrevious = "keptPrevious" // on a failed load: whether the last good pair is still served

	// Keys of cabundle-syncer's syncs.
	Secret               = "secret" // namespace/name
	WebhookConfiguration = "webhookConfiguration"
	Certificates         = "certificates" // the number of CAs in the caBundle
	Fingerprints         = "fingerprints" // each CA's Fingerprint, the Secret's CA first
	Webhooks             = "webhooks"     // the number of webhook entries written
	RequeueAfter         = "requeueAfter" // when the syncer looks again without an event
	FieldManager         = "fieldManager" // whose server-side apply entry the syncer removed from managedFields

	// Keys of cabundle-syncer's sync under the emergency disable.
	Marker        = "marker"        // the emergency-disable ConfigMap, namespace/name
	DisableReason = "disableReason" // its data key reason
	DisabledBy    = "disabledBy"    // its data key by
)

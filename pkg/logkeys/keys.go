package logkeys

// Keys shared by both binaries.
const (
	// Outcome is what happened: patched, allowed or malformed for an
	// admission request; written, state-recorded, unchanged, refused or
	// error for a caBundle sync.
	Outcome = "outcome"
	// Reason says why, with the value of the metric label of the same name.
	Reason = "reason"
	// Detail is a human-readable explanation of Reason.
	Detail = "detail"
	// Error is the error of a failed operation; zapr writes it for every
	// line logged at error level.
	Error = "error"
	// Version is the binary's version, logged at startup.
	Version = "version"
)

// Keys of snatch-webhook's admission decisions.
const (
	// Namespace is the namespace of the Pod in the AdmissionReview.
	Namespace = "namespace"
	// Pod is the Pod's name, or its generateName followed by "*" while the
	// name is still to be generated.
	Pod = "pod"
	// UID is the AdmissionReview request's uid. The API server logs it too,
	// so it ties a decision to an API request.
	UID = "uid"
	// DryRun is set, to true, only for dry-run requests.
	DryRun = "dryRun"
	// Status is the HTTP status of a malformed request's answer.
	Status = "status"
)

// Keys of snatch-webhook's serving certificate.
const (
	// Serial is the serving certificate's serial number.
	Serial = "serial"
	// Subject is the serving certificate's subject.
	Subject = "subject"
	// NotAfter is a certificate's expiry, RFC 3339 in UTC.
	NotAfter = "notAfter"
	// Fingerprint is the lowercase hex SHA-256 of a certificate's DER
	// encoding, as `openssl x509 -noout -fingerprint -sha256` prints it
	// without colons.
	Fingerprint = "fingerprint"
	// KeptPrevious says, on a failed certificate load, whether the last
	// good pair is still served (true) or none has loaded yet (false).
	KeptPrevious = "keptPrevious"
)

// Keys of cabundle-syncer's syncs.
const (
	// Secret is the certificate Secret, namespace/name.
	Secret = "secret"
	// WebhookConfiguration is the MutatingWebhookConfiguration's name.
	WebhookConfiguration = "webhookConfiguration"
	// Certificates is the number of CA certificates in the caBundle.
	Certificates = "certificates"
	// Fingerprints are the Fingerprint of each CA in the caBundle, in its
	// order: the CA of the Secret first, then the previous CAs still inside
	// the overlap.
	Fingerprints = "fingerprints"
	// Webhooks is the number of webhook entries written.
	Webhooks = "webhooks"
	// RequeueAfter is when the syncer looks again without a new event: the
	// end of the next overlap or the next expiry.
	RequeueAfter = "requeueAfter"
)

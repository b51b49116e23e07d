package admission

import (
	"encoding/base64"
	"encoding/json"
	"strconv"
)

// The response is appended by hand: it has at most five fields, and the
// patch comes prebuilt from the affinity package, so encoding a generic
// AdmissionReview would only cost time. Its shape is admission.k8s.io/v1's
// AdmissionReview with a response, and the tests decode it with the typed
// API to hold it to that.
const responsePrefix = `{"kind":"AdmissionReview","apiVersion":"admission.k8s.io/v1","response":{"uid":`

// appendAllowed appends an allowed response, with the patch when there is
// one. uid is the request's uid token, quotes included.
func appendAllowed(b, uid, patch []byte) []byte {
	b = append(b, responsePrefix...)
	b = append(b, uid...)
	b = append(b, `,"allowed":true`...)
	if len(patch) > 0 {
		b = append(b, `,"patchType":"JSONPatch","patch":"`...)
		b = base64.StdEncoding.AppendEncode(b, patch)
		b = append(b, '"')
	}
	return append(b, "}}"...)
}

// appendMalformed appends the body of a 4xx answer. The status is for the
// API server's log and for people; the API server itself only looks at the
// HTTP status, treats the call as failed and, with failurePolicy Ignore,
// admits the Pod. allowed is true so that nothing reading the body alone
// could take it for a denial.
func appendMalformed(b, uid []byte, code int, reason, message string) []byte {
	if len(uid) == 0 {
		uid = []byte(`""`)
	}
	msg, _ := json.Marshal(message) // a string always encodes
	b = append(b, responsePrefix...)
	b = append(b, uid...)
	b = append(b, `,"allowed":true,"status":{"metadata":{},"status":"Failure","message":`...)
	b = append(b, msg...)
	b = append(b, `,"reason":`...)
	b = strconv.AppendQuote(b, reason)
	b = append(b, `,"code":`...)
	b = strconv.AppendInt(b, int64(code), 10)
	return append(b, "}}}"...)
}

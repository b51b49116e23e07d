package admission

import (
	"cmp"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/go-logr/logr"
	"golang.org/x/sync/semaphore"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kyma-project/kim-snatch/pkg/affinity"
)

// DefaultMaxBodyBytes is the largest request body read. It must hold the review
// of the largest Pod the API server accepts (3 MiB, each <, > and & escaped to
// six bytes), or such a Pod is created without the term: the webhook answers
// 413 and the API server fails open. TestWebhookBehindARealAPIServerMutatesOnlyManagedPodsAndFailsOpen
// (cmd/snatch-webhook) holds it.
const DefaultMaxBodyBytes = 32 << 20

// Options configure a Handler.
type Options struct {
	Mutator      *affinity.Mutator // required
	Metrics      *Metrics          // optional
	Log          logr.Logger       // one line per request, MsgDecision
	MaxBodyBytes int64             // DefaultMaxBodyBytes when not positive
	// InFlightBodyBytes bounds the bodies held at once by all requests;
	// DefaultInFlightBodyBytes when not positive. It must hold one body of
	// MaxBodyBytes.
	InFlightBodyBytes int64
}

// Handler serves the Pod mutation as a plain http.Handler.
type Handler struct {
	opts   Options
	log    decisionLogger
	bufs   sync.Pool
	budget *semaphore.Weighted // of InFlightBodyBytes
	// malformed limits the lines of malformed requests (logcap.go).
	malformed *malformedLog
}

// NewHandler returns a Handler for the options.
func NewHandler(o Options) (*Handler, error) {
	if o.Mutator == nil {
		return nil, errors.New("admission handler: a Mutator is required")
	}
	if o.MaxBodyBytes <= 0 {
		o.MaxBodyBytes = DefaultMaxBodyBytes
	}
	if o.InFlightBodyBytes <= 0 {
		o.InFlightBodyBytes = DefaultInFlightBodyBytes
	}
	if o.InFlightBodyBytes <= o.MaxBodyBytes {
		return nil, fmt.Errorf("admission handler: the bodies in flight (%d bytes) must hold one body of the largest size, %d bytes", o.InFlightBodyBytes, o.MaxBodyBytes)
	}
	h := &Handler{opts: o, log: newDecisionLogger(o.Log), budget: semaphore.NewWeighted(o.InFlightBodyBytes),
		malformed: newMalformedLog()}
	h.bufs.New = func() any { return new(buffers) }
	return h, nil
}

// buffers are pooled: at a thousand reviews a second, a new 10 KB body each
// would be most of the garbage.
type buffers struct {
	in      []byte
	charged int64 // of the budget, for in's capacity
	out     []byte
	scan    scanner
	written bool // the current request has its answer
}

type requestError struct {
	code            int
	reason, message string
}

// ServeHTTP handles one AdmissionReview.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	start := time.Now()
	bufs := h.bufs.Get().(*buffers)
	bufs.written = false
	var rev review
	defer h.finish(w, bufs, &rev, start)
	if reqErr := h.readReview(r, bufs, &rev); reqErr != nil {
		if reqErr.code == http.StatusMethodNotAllowed {
			w.Header().Set("Allow", http.MethodPost)
		}
		bufs.write(w, reqErr.code, appendMalformed(bufs.out[:0], rev.uid.raw, reqErr.code, reqErr.message))
		if ok, suppressed := h.malformed.allow(); ok {
			h.log.write(&rev, nil, decisionLine{outcome: OutcomeMalformed, reason: reqErr.reason, detail: reqErr.message, status: reqErr.code, suppressed: suppressed})
		}
		h.opts.Metrics.observe(OutcomeMalformed, reqErr.reason, time.Since(start))
		return
	}
	if rev.isPodCreate() { // on arrival, before the decision: a late answer was still a review
		h.opts.Metrics.podReviewArrived(start)
	}
	d, err := h.decide(&rev)
	h.log.write(&rev, err, decisionLine{outcome: outcomeOf(d.Reason), reason: string(d.Reason), detail: d.Message, dryRun: rev.dryRun})
	bufs.write(w, http.StatusOK, appendAllowed(bufs.out[:0], rev.uid.raw, d.Patch))
	h.opts.Metrics.observe(outcomeOf(d.Reason), string(d.Reason), time.Since(start))
}

// finish pools bufs, after recovering from a panic: a bug must not turn into a
// denial or a dropped connection, so it answers "allowed, no patch" if nothing
// was written yet.
func (h *Handler) finish(w http.ResponseWriter, bufs *buffers, rev *review, start time.Time) {
	if p := recover(); p != nil {
		err := fmt.Errorf("panic: %v", p)
		switch {
		case bufs.written: // too late to answer
		case len(rev.uid.raw) > 0:
			bufs.write(w, http.StatusOK, appendAllowed(bufs.out[:0], rev.uid.raw, nil))
		default:
			bufs.write(w, http.StatusInternalServerError, appendMalformed(bufs.out[:0], nil, http.StatusInternalServerError, err.Error()))
		}
		h.log.write(rev, err, decisionLine{outcome: OutcomeAllowed, reason: string(affinity.ReasonError), detail: "the handler panicked"})
		h.opts.Metrics.observe(OutcomeAllowed, string(affinity.ReasonError), time.Since(start))
	}
	h.releaseBody(bufs)
	if cap(bufs.in) <= 1<<20 { // a rare huge body's buffer is not kept
		h.bufs.Put(bufs)
	}
}

// decide runs the decision order of docs/architecture.md on a well-formed review.
func (h *Handler) decide(rev *review) (affinity.Decision, error) {
	var err error
	switch {
	case !rev.isPod():
		return affinity.Decision{Reason: affinity.ReasonNotPod, Message: "the request is not for a Pod"}, nil
	case !rev.isCreate():
		return affinity.Decision{Reason: affinity.ReasonNotCreate, Message: "the request is not a CREATE"}, nil
	case !rev.hasObject:
		err = errors.New("the CREATE request carries no Pod object")
	case rev.podErr != nil:
		err = fmt.Errorf("read the Pod: %w", rev.podErr)
	default:
		return h.opts.Mutator.Decide(rev.pod.facts), nil
	}
	return affinity.Decision{Reason: affinity.ReasonError, Message: err.Error()}, err
}

// readReview reads at most MaxBodyBytes into bufs.in (readBody) and decodes them into rev;
// checkReview checks the content type last, so that its answer echoes the uid.
func (h *Handler) readReview(r *http.Request, bufs *buffers, rev *review) *requestError {
	if r.Method != http.MethodPost {
		return &requestError{http.StatusMethodNotAllowed, ReasonMethodNotAllowed, "only POST is served, got " + r.Method}
	}
	if r.ContentLength > h.opts.MaxBodyBytes {
		return h.tooLarge()
	}
	if reqErr := h.readBody(r, bufs); reqErr != nil {
		return reqErr
	}
	if len(bufs.in) == 0 {
		return &requestError{http.StatusBadRequest, ReasonEmptyBody, "the request body is empty"}
	}
	var err error
	*rev, err = decodeReview(&bufs.scan, bufs.in, h.opts.Mutator.Policy().PoolLabelKey)
	return checkReview(rev, err, r.Header.Get("Content-Type"))
}

func (h *Handler) tooLarge() *requestError {
	return &requestError{http.StatusRequestEntityTooLarge, ReasonBodyTooLarge,
		"the request body is larger than the limit of " + strconv.FormatInt(h.opts.MaxBodyBytes, 10) + " bytes"}
}

// checkReview checks the review, then the content type ct: application/json,
// with any parameters.
func checkReview(rev *review, err error, ct string) *requestError {
	mediaType, _, _ := strings.Cut(ct, ";")
	switch {
	case errors.Is(err, errInvalidJSON):
		return &requestError{http.StatusBadRequest, ReasonInvalidJSON, "the body is not valid JSON: " + err.Error()}
	case err != nil:
		return &requestError{http.StatusBadRequest, ReasonInvalidReview, "the body is not an AdmissionReview: " + err.Error()}
	case !rev.apiVersion.is(reviewAPIVersion) || !rev.kind.is(reviewKind):
		return &requestError{http.StatusBadRequest, ReasonInvalidReview, fmt.Sprintf(
			"expected apiVersion %s and kind %s, got %q and %q", reviewAPIVersion, reviewKind, rev.apiVersion, rev.kind)}
	case !rev.hasRequest:
		return &requestError{http.StatusBadRequest, ReasonNoRequest, "the AdmissionReview has no request"}
	case len(rev.uid.raw) == 0:
		return &requestError{http.StatusBadRequest, ReasonNoUID, "the AdmissionReview request has no uid"}
	case strings.EqualFold(strings.TrimSpace(mediaType), "application/json"):
		return nil
	}
	return &requestError{http.StatusUnsupportedMediaType, ReasonWrongContentType,
		"the content type must be application/json, got " + cmp.Or(ct, "none")}
}

// write answers with body, which it keeps as b.out for the next request.
func (b *buffers) write(w http.ResponseWriter, code int, body []byte) {
	b.out = body
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(code)
	_, _ = w.Write(body) // the client went away; there is no one left to tell
	b.written = true
}

// Responses are appended by hand: at most five fields and a prebuilt patch,
// which encoding a generic AdmissionReview would only slow down. Tests hold
// them to the typed v1 AdmissionReview.
const responsePrefix = `{"kind":"AdmissionReview","apiVersion":"admission.k8s.io/v1","response":{"uid":"`

// appendAllowed appends an allowed response, with the patch when there is
// one. uid is the raw contents of the request's uid, escaped as it came.
func appendAllowed(b, uid, patch []byte) []byte {
	b = append(append(b, responsePrefix...), uid...)
	b = append(b, `","allowed":true`...)
	if len(patch) > 0 {
		b = append(b, `,"patchType":"JSONPatch","patch":"`...)
		b = append(base64.StdEncoding.AppendEncode(b, patch), '"')
	}
	return append(b, "}}"...)
}

var statusReasons = map[int]metav1.StatusReason{
	http.StatusBadRequest:            metav1.StatusReasonBadRequest,
	http.StatusMethodNotAllowed:      metav1.StatusReasonMethodNotAllowed,
	http.StatusRequestEntityTooLarge: metav1.StatusReasonRequestEntityTooLarge,
	http.StatusUnsupportedMediaType:  metav1.StatusReasonUnsupportedMediaType,
	http.StatusInternalServerError:   metav1.StatusReasonInternalError,
	http.StatusServiceUnavailable:    metav1.StatusReasonServiceUnavailable,
}

// appendMalformed appends the body of an error answer. The API server reads
// only its HTTP status, and fails open; allowed is true so that nothing reading
// the body alone takes it for a denial.
func appendMalformed(b, uid []byte, code int, message string) []byte {
	status, _ := json.Marshal(metav1.Status{ // a Status always encodes
		Status: metav1.StatusFailure, Message: message, Reason: statusReasons[code], Code: int32(code),
	})
	b = append(append(b, responsePrefix...), uid...)
	b = append(append(b, `","allowed":true,"status":`...), status...)
	return append(b, "}}"...)
}

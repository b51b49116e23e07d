package admission

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/go-logr/logr"

	"github.com/kyma-project/kim-snatch/pkg/affinity"
)

// Paths the handler is served on. PathLegacy is kim-snatch's old path, kept
// so that existing MutatingWebhookConfigurations go on working.
const (
	Path       = "/mutate-pod"
	PathLegacy = "/mutate--v1-pod"
)

// DefaultMaxBodyBytes is the largest request body read. It must hold the
// review of the largest Pod the API server accepts, or such a Pod is created
// without the term (the webhook answers 413 and the API server fails open).
//
// kube-apiserver reads request bodies of at most 3 MiB (its
// MaxRequestBodyBytes), and an AdmissionReview carries the object once for a
// CREATE. But the API server encodes the review with encoding/json, which
// writes each <, > and & as \u003c: six bytes for one. A Pod of 3 MiB of
// such bytes becomes a review of 18 MiB, plus the envelope, defaulted
// fields and managedFields. 32 MiB covers that with room for a Pod sent as
// protobuf, whose JSON form is larger. controller-runtime's 7 MiB does not:
// a Pod with 1.2 MiB of '<' in an argument was created unpatched.
// TestWebhook_through_a_real_api_server (cmd/snatch-webhook) creates a Pod
// of about 3 MiB of '<' through the API server and requires the term. A
// body this large is read into a buffer of its own that is not pooled.
const DefaultMaxBodyBytes = 32 << 20

// Options configure a Handler.
type Options struct {
	// Mutator makes the decision. Required.
	Mutator *affinity.Mutator
	// Metrics, when set, count every request.
	Metrics *Metrics
	// Log receives one line per request, with the message MsgDecision.
	Log logr.Logger
	// MaxBodyBytes defaults to DefaultMaxBodyBytes.
	MaxBodyBytes int64
}

// Handler serves the Pod mutation as a plain http.Handler. It speaks the v1
// AdmissionReview contract as controller-runtime's admission.Webhook does
// (uid echoed, content type and size checked, a clear 4xx for malformed
// input), but it reads only the fields the decision needs, in place, and
// writes the prebuilt patch. The benchmark in handler_bench_test.go holds
// the generic approach beside it.
type Handler struct {
	mutator *affinity.Mutator
	poolKey string
	metrics *Metrics
	log     decisionLogger
	maxBody int64
	bufs    sync.Pool
}

var _ http.Handler = (*Handler)(nil)

// NewHandler returns a Handler for the options.
func NewHandler(o Options) (*Handler, error) {
	if o.Mutator == nil {
		return nil, errors.New("admission handler: a Mutator is required")
	}
	if o.MaxBodyBytes <= 0 {
		o.MaxBodyBytes = DefaultMaxBodyBytes
	}
	h := &Handler{
		mutator: o.Mutator,
		poolKey: o.Mutator.Policy().PoolLabelKey,
		metrics: o.Metrics,
		log:     newDecisionLogger(o.Log),
		maxBody: o.MaxBodyBytes,
	}
	h.bufs.New = func() any { return &buffers{in: make([]byte, 0, 16<<10), out: make([]byte, 0, 1<<10)} }
	return h, nil
}

// buffers are one request's body and response. They are pooled: at a
// thousand reviews a second, allocating 10 KB for each body is most of the
// garbage the handler would make.
type buffers struct {
	in, out []byte
	walk    walker
}

// requestError is a malformed request: an HTTP status, a metric reason and a
// message for the caller.
type requestError struct {
	code    int
	reason  string
	message string
}

// ServeHTTP handles one AdmissionReview.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	start := time.Now()
	bufs := h.bufs.Get().(*buffers)
	defer h.putBufs(bufs)

	var rev review
	written := false
	defer func() {
		// A bug must not turn into a denial or a dropped connection: answer
		// "allowed, no patch" if nothing was written yet.
		if p := recover(); p != nil {
			err := fmt.Errorf("panic: %v", p)
			if !written && len(rev.uid) > 0 {
				h.writeBody(w, http.StatusOK, appendAllowed(bufs.out[:0], rev.uid, nil))
			} else if !written {
				h.writeBody(w, http.StatusInternalServerError, appendMalformed(bufs.out[:0], nil, http.StatusInternalServerError, "InternalError", err.Error()))
			}
			h.log.panicked(&rev, err)
			h.metrics.observe(OutcomeAllowed, string(affinity.ReasonError), time.Since(start))
		}
	}()

	body, reqErr := h.read(r, bufs.in[:0])
	bufs.in = body
	if reqErr == nil {
		var err error
		rev, err = decodeReview(&bufs.walk, body, h.poolKey)
		reqErr = checkReview(&rev, err)
	}
	if reqErr == nil {
		reqErr = checkContentType(r.Header.Get("Content-Type"))
	}
	if reqErr != nil {
		if reqErr.code == http.StatusMethodNotAllowed {
			w.Header().Set("Allow", http.MethodPost)
		}
		bufs.out = appendMalformed(bufs.out[:0], rev.uid, reqErr.code, statusReason(reqErr.code), reqErr.message)
		h.writeBody(w, reqErr.code, bufs.out)
		written = true
		h.log.malformed(&rev, reqErr)
		h.metrics.observe(OutcomeMalformed, reqErr.reason, time.Since(start))
		return
	}

	d, err := h.decide(&rev)
	h.log.decision(&rev, d, err)
	bufs.out = appendAllowed(bufs.out[:0], rev.uid, d.Patch)
	h.writeBody(w, http.StatusOK, bufs.out)
	written = true
	outcome := OutcomeAllowed
	if d.Patched() {
		outcome = OutcomePatched
	}
	h.metrics.observe(outcome, string(d.Reason), time.Since(start))
}

func (h *Handler) putBufs(b *buffers) {
	// Do not keep a rare huge body's buffer alive in the pool.
	if cap(b.in) <= 1<<20 {
		h.bufs.Put(b)
	}
}

// decide runs the decision order (docs/architecture.md, "Admission
// decision order") on a well-formed review.
func (h *Handler) decide(rev *review) (affinity.Decision, error) {
	switch {
	case !rev.isPod():
		return affinity.Decision{Reason: affinity.ReasonNotPod, Message: "the request is not for a Pod"}, nil
	case !rev.isCreate():
		return affinity.Decision{Reason: affinity.ReasonNotCreate, Message: "the request is not a CREATE"}, nil
	case !rev.hasObject:
		err := errors.New("the CREATE request carries no Pod object")
		return affinity.Decision{Reason: affinity.ReasonError, Message: err.Error()}, err
	case rev.podErr != nil:
		err := fmt.Errorf("read the Pod: %w", rev.podErr)
		return affinity.Decision{Reason: affinity.ReasonError, Message: err.Error()}, err
	}
	return h.mutator.Decide(rev.pod.facts), nil
}

// read reads the body into buf, refusing more than maxBody bytes.
func (h *Handler) read(r *http.Request, buf []byte) ([]byte, *requestError) {
	if r.Method != http.MethodPost {
		return buf, &requestError{http.StatusMethodNotAllowed, ReasonMethodNotAllowed, "only POST is served, got " + r.Method}
	}
	tooLarge := &requestError{http.StatusRequestEntityTooLarge, ReasonBodyTooLarge,
		"the request body is larger than the limit of " + strconv.FormatInt(h.maxBody, 10) + " bytes"}
	if r.ContentLength > h.maxBody {
		return buf, tooLarge
	}
	if r.ContentLength > 0 && int64(cap(buf)) < r.ContentLength {
		buf = make([]byte, 0, r.ContentLength)
	}
	if r.Body == nil {
		return buf, &requestError{http.StatusBadRequest, ReasonEmptyBody, "the request body is empty"}
	}
	lr := io.LimitedReader{R: r.Body, N: h.maxBody + 1}
	for {
		if len(buf) == cap(buf) {
			buf = append(buf, 0)[:len(buf)]
		}
		n, err := lr.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
		if err == io.EOF {
			break
		}
		if err != nil {
			return buf, &requestError{http.StatusBadRequest, ReasonInvalidJSON, "read the request body: " + err.Error()}
		}
	}
	if int64(len(buf)) > h.maxBody {
		return buf, tooLarge
	}
	if len(buf) == 0 {
		return buf, &requestError{http.StatusBadRequest, ReasonEmptyBody, "the request body is empty"}
	}
	return buf, nil
}

// checkContentType accepts application/json with any parameters, as the
// API server sends "application/json" and nothing else.
func checkContentType(ct string) *requestError {
	mt, _, _ := strings.Cut(ct, ";")
	if strings.EqualFold(strings.TrimSpace(mt), "application/json") {
		return nil
	}
	if ct == "" {
		ct = "none"
	}
	return &requestError{http.StatusUnsupportedMediaType, ReasonWrongContentType,
		"the content type must be application/json, got " + ct}
}

func checkReview(rev *review, err error) *requestError {
	var se *syntaxError
	var te *fieldTypeError
	switch {
	case errors.As(err, &se):
		return &requestError{http.StatusBadRequest, ReasonInvalidJSON, "the body is not valid JSON: " + se.Error()}
	case errors.As(err, &te):
		return &requestError{http.StatusBadRequest, ReasonInvalidReview, "the body is not an AdmissionReview: " + te.Error()}
	case err != nil:
		return &requestError{http.StatusBadRequest, ReasonInvalidReview, err.Error()}
	case !rev.apiVersion.is(reviewAPIVersion) || !rev.kind.is(reviewKind):
		return &requestError{http.StatusBadRequest, ReasonInvalidReview, fmt.Sprintf(
			"expected apiVersion %s and kind %s, got %q and %q", reviewAPIVersion, reviewKind, rev.apiVersion.String(), rev.kind.String())}
	case !rev.hasRequest:
		return &requestError{http.StatusBadRequest, ReasonNoRequest, "the AdmissionReview has no request"}
	case len(rev.uid) <= 2:
		return &requestError{http.StatusBadRequest, ReasonNoUID, "the AdmissionReview request has no uid"}
	}
	return nil
}

func statusReason(code int) string {
	switch code {
	case http.StatusMethodNotAllowed:
		return "MethodNotAllowed"
	case http.StatusRequestEntityTooLarge:
		return "RequestEntityTooLarge"
	case http.StatusUnsupportedMediaType:
		return "UnsupportedMediaType"
	case http.StatusInternalServerError:
		return "InternalError"
	}
	return "BadRequest"
}

func (h *Handler) writeBody(w http.ResponseWriter, code int, body []byte) {
	hdr := w.Header()
	hdr.Set("Content-Type", "application/json")
	hdr.Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(code)
	_, _ = w.Write(body) // the client went away; there is no one left to tell
}

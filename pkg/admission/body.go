package admission

import (
	"cmp"
	"io"
	"net/http"
	"strconv"
)

// DefaultInFlightBodyBytes bounds the request bodies held at once, across all
// connections (Options.InFlightBodyBytes, snatch-webhook's
// --max-in-flight-body-bytes). It is derived from the shipped memory limit of
// 128Mi and its GOMEMLIMIT (deploy/webhook/deployment.yaml): what a replica
// needs without bodies (its memory request) and the garbage a growing buffer
// leaves for the collector must fit beside it. It holds one body of
// DefaultMaxBodyBytes, so the review of the largest Pod is patched beside
// normal traffic; test/manifests (TestWebhookMemoryFitsTheShippedLimit) holds
// it under the limit.
const DefaultInFlightBodyBytes = 48 << 20

// minBodyChunk is the first step of a body buffer: a usual review fits in it.
const minBodyChunk = 16 << 10

// readBody reads r's body into bufs.in. The buffer grows only as bytes arrive,
// at most doubling what has arrived and never past what the client claims, and
// each step of its capacity is charged to the shared budget before it is used
// (bufs.charged, released by finish). A client's Content-Length alone
// allocates nothing. Past the budget, this request alone gets a 503 without
// Retry-After, so the API server fails open for this call and does not retry.
func (h *Handler) readBody(r *http.Request, bufs *buffers) *requestError {
	limit := h.opts.MaxBodyBytes + 1 // one byte past the limit tells a body over it
	body := cmp.Or[io.Reader](r.Body, http.NoBody)
	bufs.in = bufs.in[:0]
	for {
		if int64(len(bufs.in)) == bufs.charged {
			if int64(len(bufs.in)) >= limit {
				return h.tooLarge()
			}
			want := nextBodyCap(len(bufs.in), r.ContentLength, limit)
			if !h.budget.TryAcquire(want - bufs.charged) {
				return &requestError{http.StatusServiceUnavailable, ReasonOverBudget,
					"the request bodies in flight would exceed " + strconv.FormatInt(h.opts.InFlightBodyBytes, 10) + " bytes"}
			}
			bufs.charged = want
			if int(want) > cap(bufs.in) {
				bufs.in = append(make([]byte, 0, want), bufs.in...)
			}
		}
		n, err := body.Read(bufs.in[len(bufs.in):bufs.charged])
		bufs.in = bufs.in[:len(bufs.in)+n]
		switch {
		case err == io.EOF:
			if int64(len(bufs.in)) >= limit {
				return h.tooLarge()
			}
			return nil
		case err != nil:
			return &requestError{http.StatusBadRequest, ReasonInvalidJSON, "read the request body: " + err.Error()}
		}
	}
}

// nextBodyCap is the next capacity of a buffer holding n bytes: double, from
// minBodyChunk, up to limit, and no more than one byte past the client's claim
// (declared, -1 when unknown) while the claim is ahead of n.
func nextBodyCap(n int, declared, limit int64) int64 {
	want := min(max(2*int64(n), minBodyChunk), limit)
	if declared >= int64(n) && declared < want {
		want = declared + 1 // the byte past the claim lets the read see the end
	}
	return want
}

// releaseBody returns the request's charge to the budget.
func (h *Handler) releaseBody(bufs *buffers) {
	h.budget.Release(bufs.charged)
	bufs.charged = 0
}

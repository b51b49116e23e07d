package serving

import (
	"log"
	"strings"

	"github.com/go-logr/logr"
)

// newErrorLog routes net/http's own messages (TLS handshake errors, mostly)
// into the structured log at verbosity 1: a client that drops a handshake
// is not an error of the webhook, but it helps when tracing a caBundle
// problem.
func newErrorLog(l logr.Logger) *log.Logger {
	return log.New(logWriter{l}, "", 0)
}

type logWriter struct{ l logr.Logger }

func (w logWriter) Write(p []byte) (int, error) {
	w.l.V(1).Info(strings.TrimSpace(string(p)))
	return len(p), nil
}

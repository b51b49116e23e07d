package admission

import (
	"strings"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"golang.org/x/time/rate"
)

// maxLoggedField caps each string of a decision line (namespace, Pod, uid,
// detail, the error): a name of the API server is at most 253 bytes, and a
// client must not fill the log with megabytes of its own.
const maxLoggedField = 512

// capSuffix ends a field that was cut.
const capSuffix = "...(cut)"

// Malformed requests never come from the API server in normal operation, so
// their lines are limited to a rate that a person reads and that no client can
// turn into a flood; the metrics still count every request.
const malformedLogRate rate.Limit = 5

// malformedLogBurst is how many malformed lines may come at one instant.
const malformedLogBurst = 20

// capField cuts s to maxLoggedField bytes at a rune boundary.
func capField(s string) string {
	if len(s) <= maxLoggedField {
		return s
	}
	end := maxLoggedField - len(capSuffix)
	for end > 0 && !utf8.RuneStart(s[end]) {
		end--
	}
	return s[:end] + capSuffix
}

// writeCapped writes v to b, cut as capField cuts.
func writeCapped(b *strings.Builder, v rawString) {
	if !v.escaped && len(v.raw) <= maxLoggedField {
		b.Write(v.raw)
		return
	}
	if v.escaped { // unquote no more than the field can show
		v.raw = v.raw[:escapedPrefix(v.raw, maxLoggedField+1)]
	}
	b.WriteString(capField(v.String()))
}

// escapedPrefix is the length of raw's longest prefix of at most n escapes
// and bytes that ends between two of them, and not inside a surrogate pair.
func escapedPrefix(raw []byte, n int) int {
	end, units := 0, 0
	for i := 0; i < len(raw) && units < n; units++ {
		next := i + 1
		if raw[i] == '\\' {
			next = i + 2
			if raw[i+1] == 'u' {
				next = i + 6
			}
		}
		highSurrogate := next == i+6 && (raw[i+2]|0x20) == 'd' && strings.IndexByte("89abAB", raw[i+3]) >= 0
		i = next
		if !highSurrogate {
			end = i
		}
	}
	return end
}

// malformedLog lets a malformed line through at malformedLogRate and counts
// those it keeps back, for the next line let through.
type malformedLog struct {
	limit      *rate.Limiter
	suppressed atomic.Int64
	now        func() time.Time // time.Now; tests set a clock of their own
}

func newMalformedLog() *malformedLog {
	return &malformedLog{limit: rate.NewLimiter(malformedLogRate, malformedLogBurst), now: time.Now}
}

// allow reports whether to log a malformed line now and, if so, how many were
// left out before it.
func (m *malformedLog) allow() (bool, int64) {
	if !m.limit.AllowN(m.now(), 1) {
		m.suppressed.Add(1)
		return false, 0
	}
	return true, m.suppressed.Swap(0)
}

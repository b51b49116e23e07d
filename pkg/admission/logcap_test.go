package admission

import (
	"bytes"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/kyma-project/kim-snatch/pkg/logkeys"
)

// No string a client sends reaches the log longer than the cap, whether it
// comes plain, escaped, or quoted in a detail.
func TestHandlerCapsLoggedFields(t *testing.T) {
	long := strings.Repeat("n", 100<<10)
	escaped := strings.Repeat(`\u00e9`, 20<<10) // é, two bytes once unquoted
	pod := []byte(`{"apiVersion":"v1","kind":"Pod","metadata":{"name":"` + long + `"},"spec":{"containers":[{"name":"c","image":"i"}]}}`)
	tests := []struct {
		name string
		body []byte
		key  string
		want string // the start of the field
	}{
		{name: "long_pod_name_is_capped", body: reviewOf(t, "uid", "CREATE", podKind, pod), key: logkeys.Pod, want: "nnnn"},
		{name: "long_namespace_is_capped", body: bytes.Replace(reviewOf(t, "uid", "CREATE", podKind, pod), []byte(`"namespace":"kyma-system"`), []byte(`"namespace":"`+long+`"`), 1), key: logkeys.Namespace, want: "nnnn"},
		{name: "long_escaped_uid_is_capped", body: reviewOf(t, "", "DELETE", podKind, []byte("null")), key: logkeys.UID, want: "éé"},
		{name: "long_api_version_in_the_detail_is_capped", body: []byte(`{"kind":"AdmissionReview","apiVersion":"` + long + `","request":{"uid":"u"}}`), key: logkeys.Detail, want: "expected apiVersion"},
	}
	tests[2].body = bytes.Replace(tests[2].body, []byte(`"uid":""`), []byte(`"uid":"`+escaped+`"`), 1)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, _ := loggedLine(t, tt.body)[tt.key].(string)
			if len(got) > maxLoggedField || !strings.HasPrefix(got, tt.want) || !utf8.ValidString(got) {
				t.Errorf("%s has %d bytes (cap %d), starts %.40q, valid UTF-8 %v; want a valid prefix starting %q",
					tt.key, len(got), maxLoggedField, got, utf8.ValidString(got), tt.want)
			}
			if !strings.HasSuffix(got, capSuffix) {
				t.Errorf("%s does not end in %q: a reader cannot tell it was cut", tt.key, capSuffix)
			}
		})
	}
}

// Malformed requests are counted one by one, but their lines come at most at
// the limiter's rate, and the next line let through says how many were left
// out.
func TestHandlerRateLimitsMalformedLines(t *testing.T) {
	log, buf := jsonLogger()
	h, metrics := newTestHandler(t, func(o *Options) { o.Log = log })
	now := time.Unix(0, 0)
	h.malformed.now = func() time.Time { return now }
	const sent = 100
	for range sent {
		post(h, "application/json", []byte("not json"))
	}
	if got := len(buf.Objects(t)); got != malformedLogBurst {
		t.Errorf("%d lines for %d malformed requests at one instant, want the burst, %d", got, sent, malformedLogBurst)
	}
	if got := counterValue(metrics, OutcomeMalformed, ReasonInvalidJSON); got != sent {
		t.Errorf("invalid-json count = %v, want %d: the metric counts every request", got, sent)
	}
	now = now.Add(time.Second)
	post(h, "application/json", []byte("not json"))
	lines := buf.Objects(t)
	last := lines[len(lines)-1]
	if got, _ := last[logkeys.Suppressed].(float64); got != sent-malformedLogBurst {
		t.Errorf("%s = %v on the next line, want %d", logkeys.Suppressed, last[logkeys.Suppressed], sent-malformedLogBurst)
	}
	post(h, "application/json", reviewOf(t, "uid-ok", "CREATE", podKind, goldenPod(t, "no-affinity.yaml")))
	if got := len(buf.Objects(t)); got != len(lines)+1 {
		t.Errorf("a decision line was held back by the malformed limit: %d lines, want %d", got, len(lines)+1)
	}
}

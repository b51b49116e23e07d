package syncer

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/kyma-project/kim-snatch/pkg/cabundle"
)

// StateAnnotation holds the overlap state on the MutatingWebhookConfiguration.
//
// The syncer keeps nothing in memory or on disk: a restarted process or a new
// leader must know when each CA in the bundle left the Secret, or it would
// either drop a previous CA too early (the window this syncer exists to
// close) or keep it forever. The object that carries the bundle is the one
// place that is always read together with it, and the field manager that
// owns the caBundle owns this key too.
//
// The value is JSON, one entry per CA in the bundle, by the lowercase hex
// SHA-256 fingerprint of its DER encoding:
//
//	{"<sha256>":{"firstSeen":"2026-03-01T12:00:00Z","supersededAt":"2026-05-01T09:30:01Z"}}
//
// supersededAt is absent while the CA is in the Secret. Times are RFC 3339 in
// UTC, to the second.
const StateAnnotation = "cabundle-syncer.kyma-project.io/ca-state"

type stateRecord struct {
	FirstSeen    string `json:"firstSeen"`
	SupersededAt string `json:"supersededAt,omitempty"`
}

// encodeState renders the state for the annotation. encoding/json sorts map
// keys, so equal states give equal strings and an unchanged state never
// causes a write.
func encodeState(s cabundle.State) string {
	out := make(map[string]stateRecord, len(s))
	for fp, r := range s {
		rec := stateRecord{FirstSeen: formatTime(r.FirstSeen)}
		if !r.SupersededAt.IsZero() {
			rec.SupersededAt = formatTime(r.SupersededAt)
		}
		out[fp] = rec
	}
	// A map of strings to a struct of strings cannot fail to marshal.
	b, _ := json.Marshal(out)
	return string(b)
}

// decodeState parses the annotation. An empty value is an empty state. On
// error it returns what it could not read as an error and no state: the merge
// then treats every previous CA as superseded now, which keeps it longer, never
// shorter.
func decodeState(v string) (cabundle.State, error) {
	if v == "" {
		return cabundle.State{}, nil
	}
	var in map[string]stateRecord
	if err := json.Unmarshal([]byte(v), &in); err != nil {
		return nil, fmt.Errorf("decode annotation %s: %w", StateAnnotation, err)
	}
	s := make(cabundle.State, len(in))
	for fp, rec := range in {
		if !isFingerprint(fp) {
			return nil, fmt.Errorf("decode annotation %s: %q is not a SHA-256 fingerprint", StateAnnotation, fp)
		}
		var r cabundle.Record
		var err error
		if r.FirstSeen, err = parseTime(rec.FirstSeen); err != nil {
			return nil, fmt.Errorf("decode annotation %s: %s firstSeen: %w", StateAnnotation, fp, err)
		}
		if rec.SupersededAt != "" {
			if r.SupersededAt, err = parseTime(rec.SupersededAt); err != nil {
				return nil, fmt.Errorf("decode annotation %s: %s supersededAt: %w", StateAnnotation, fp, err)
			}
		}
		s[fp] = r
	}
	return s, nil
}

func formatTime(t time.Time) string { return t.UTC().Format(time.RFC3339) }

func parseTime(s string) (time.Time, error) { return time.Parse(time.RFC3339, s) }

// isFingerprint reports whether s is a lowercase hex SHA-256, as
// cabundle.Fingerprint writes it.
func isFingerprint(s string) bool {
	if len(s) != 64 {
		return false
	}
	for _, c := range s {
		if (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}

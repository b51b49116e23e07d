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
// place that is always read together with it. The syncer writes the key only
// through the patch that writes the caBundle (caBundlePatch), under the same
// field manager, so the field manager that owns the caBundle owns this key
// too.
//
// The value is JSON with a format version; the package documentation lists
// every version ever written.
const StateAnnotation = "cabundle-syncer.kyma-project.io/ca-state"

// StateFormatVersion is the format version of StateAnnotation that this
// syncer writes. It reads every version up to this one. A new version needs
// a golden file in testdata and its entry in the package documentation.
const StateFormatVersion = 1

// stateDocument is StateAnnotation from version 1 on.
type stateDocument struct {
	Version int                    `json:"v"`
	CAs     map[string]stateRecord `json:"cas"`
}

type stateRecord struct {
	FirstSeen    string `json:"firstSeen"`
	SupersededAt string `json:"supersededAt,omitempty"`
}

// encodeState renders the state for the annotation, in StateFormatVersion.
// encoding/json sorts map keys, so equal states give equal strings and an
// unchanged state never causes a write.
func encodeState(s cabundle.State) string {
	out := stateDocument{Version: StateFormatVersion, CAs: make(map[string]stateRecord, len(s))}
	for fp, r := range s {
		rec := stateRecord{FirstSeen: formatTime(r.FirstSeen)}
		if !r.SupersededAt.IsZero() {
			rec.SupersededAt = formatTime(r.SupersededAt)
		}
		out.CAs[fp] = rec
	}
	// A number and a map of strings to a struct of strings cannot fail to
	// marshal.
	b, _ := json.Marshal(out)
	return string(b)
}

// decodeState parses the annotation in any format version up to
// StateFormatVersion. An empty value is an empty state. On error it returns
// what it could not read as an error and no state: the merge then treats
// every previous CA as superseded now, which keeps it longer, never shorter.
func decodeState(v string) (cabundle.State, error) {
	if v == "" {
		return cabundle.State{}, nil
	}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal([]byte(v), &fields); err != nil {
		return nil, fmt.Errorf("decode annotation %s: %w", StateAnnotation, err)
	}
	var in map[string]stateRecord
	if _, versioned := fields["v"]; versioned {
		var doc stateDocument
		if err := json.Unmarshal([]byte(v), &doc); err != nil {
			return nil, fmt.Errorf("decode annotation %s: %w", StateAnnotation, err)
		}
		if doc.Version < 1 || doc.Version > StateFormatVersion {
			return nil, fmt.Errorf("decode annotation %s: format version %d, this syncer reads versions 0 to %d", StateAnnotation, doc.Version, StateFormatVersion)
		}
		in = doc.CAs
	} else if err := json.Unmarshal([]byte(v), &in); err != nil {
		// Version 0: the records alone.
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

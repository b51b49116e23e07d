package syncer

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/kyma-project/kim-snatch/pkg/cabundle"
)

// StateAnnotation holds the overlap state (when each CA left the Secret) on
// the object always read with the bundle. Only caBundlePatch writes it, so
// FieldManager owns it with the caBundle. docs/architecture.md ("The
// overlap-state annotation") lists its format versions.
const StateAnnotation = "cabundle-syncer.kyma-project.io/ca-state"

// StateFormatVersion is the format version of StateAnnotation that this
// syncer writes; it reads every version up to this one. A new version needs
// a golden file in testdata and its entry in docs/architecture.md.
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

// encodeState renders the state in StateFormatVersion. encoding/json sorts
// map keys, so equal states give equal strings and cause no write.
func encodeState(s cabundle.State) string {
	out := stateDocument{Version: StateFormatVersion, CAs: make(map[string]stateRecord, len(s))}
	for fp, r := range s {
		rec := stateRecord{FirstSeen: cabundle.FormatTime(r.FirstSeen)}
		if !r.SupersededAt.IsZero() {
			rec.SupersededAt = cabundle.FormatTime(r.SupersededAt)
		}
		out.CAs[fp] = rec
	}
	// A number and maps and structs of strings cannot fail to marshal.
	b, _ := json.Marshal(out)
	return string(b)
}

// decodeState parses the annotation in any format version up to
// StateFormatVersion: an empty value is an empty state, an error no state.
func decodeState(v string) (cabundle.State, error) {
	if v == "" {
		return cabundle.State{}, nil
	}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal([]byte(v), &fields); err != nil {
		return nil, fmt.Errorf("decode annotation %s: %w", StateAnnotation, err)
	}
	var doc stateDocument
	_, versioned := fields["v"]
	target := any(&doc)
	if !versioned {
		target = &doc.CAs // version 0: the records alone
	}
	if err := json.Unmarshal([]byte(v), target); err != nil {
		return nil, fmt.Errorf("decode annotation %s: %w", StateAnnotation, err)
	}
	if versioned && (doc.Version < 1 || doc.Version > StateFormatVersion) {
		return nil, fmt.Errorf("decode annotation %s: format version %d, this syncer reads versions 0 to %d",
			StateAnnotation, doc.Version, StateFormatVersion)
	}
	s := make(cabundle.State, len(doc.CAs))
	for fp, rec := range doc.CAs {
		// cabundle.Fingerprint writes lowercase hex SHA-256.
		if b, err := hex.DecodeString(fp); err != nil || len(b) != sha256.Size || fp != strings.ToLower(fp) {
			return nil, fmt.Errorf("decode annotation %s: %q is not a SHA-256 fingerprint", StateAnnotation, fp)
		}
		var r cabundle.Record
		var err error
		if r.FirstSeen, err = time.Parse(time.RFC3339, rec.FirstSeen); err != nil {
			return nil, fmt.Errorf("decode annotation %s: %s firstSeen: %w", StateAnnotation, fp, err)
		}
		if rec.SupersededAt != "" {
			if r.SupersededAt, err = time.Parse(time.RFC3339, rec.SupersededAt); err != nil {
				return nil, fmt.Errorf("decode annotation %s: %s supersededAt: %w", StateAnnotation, fp, err)
			}
		}
		s[fp] = r
	}
	return s, nil
}

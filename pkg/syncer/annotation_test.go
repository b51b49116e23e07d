package syncer

import (
	"maps"
	"strings"
	"testing"
	"time"

	"github.com/kyma-project/kim-snatch/pkg/cabundle"
)

func TestStateAnnotationDecodesEveryVersionAndRefusesUnknownOnes(t *testing.T) {
	fpA := strings.Repeat("a", 64)
	fpB := strings.Repeat("0123456789abcdef", 4)
	t0 := time.Date(2026, time.March, 1, 12, 0, 0, 0, time.UTC)
	t1 := t0.Add(90 * time.Minute)

	tests := []struct {
		name    string
		value   string
		want    cabundle.State
		wantErr string
	}{
		{name: "absent_is_empty", value: "", want: cabundle.State{}},
		{name: "v0_empty_object_is_empty", value: "{}", want: cabundle.State{}},
		{name: "v1_without_cas_is_empty", value: `{"v":1,"cas":{}}`, want: cabundle.State{}},
		{
			name:  "v1_current_and_previous_are_decoded",
			value: `{"v":1,"cas":{"` + fpA + `":{"firstSeen":"2026-03-01T12:00:00Z"},"` + fpB + `":{"firstSeen":"2026-03-01T12:00:00Z","supersededAt":"2026-03-01T13:30:00Z"}}}`,
			want:  cabundle.State{fpA: {FirstSeen: t0}, fpB: {FirstSeen: t0, SupersededAt: t1}},
		},
		{name: "v1_not_a_fingerprint_is_refused", value: `{"v":1,"cas":{"abc":{"firstSeen":"2026-03-01T12:00:00Z"}}}`, wantErr: "not a SHA-256 fingerprint"},
		{name: "newer_version_is_refused", value: `{"v":2,"cas":{}}`, wantErr: "format version 2"},
		// Version 0 never carried "v"; a value that says 0 was not written by a syncer.
		{name: "explicit_version_0_is_refused", value: `{"v":0,"cas":{}}`, wantErr: "format version 0"},
		{name: "version_not_a_number_is_refused", value: `{"v":"1","cas":{}}`, wantErr: "decode annotation"},
		{name: "json_array_is_refused", value: `[]`, wantErr: "decode annotation"},
		{
			name:  "v0_current_and_previous_are_decoded",
			value: `{"` + fpA + `":{"firstSeen":"2026-03-01T12:00:00Z"},"` + fpB + `":{"firstSeen":"2026-03-01T12:00:00Z","supersededAt":"2026-03-01T13:30:00Z"}}`,
			want:  cabundle.State{fpA: {FirstSeen: t0}, fpB: {FirstSeen: t0, SupersededAt: t1}},
		},
		{
			name:  "other_time_zone_gives_the_same_instant",
			value: `{"` + fpA + `":{"firstSeen":"2026-03-01T13:00:00+01:00"}}`,
			want:  cabundle.State{fpA: {FirstSeen: t0}},
		},
		{name: "not_json_is_refused", value: "first-seen: yesterday", wantErr: "decode annotation"},
		{name: "not_a_fingerprint_is_refused", value: `{"abc":{"firstSeen":"2026-03-01T12:00:00Z"}}`, wantErr: "not a SHA-256 fingerprint"},
		{name: "upper_case_fingerprint_is_refused", value: `{"` + strings.ToUpper(fpB) + `":{"firstSeen":"2026-03-01T12:00:00Z"}}`, wantErr: "not a SHA-256 fingerprint"},
		{name: "missing_first_seen_is_refused", value: `{"` + fpA + `":{}}`, wantErr: "firstSeen"},
		{name: "bad_superseded_at_is_refused", value: `{"` + fpA + `":{"firstSeen":"2026-03-01T12:00:00Z","supersededAt":"soon"}}`, wantErr: "supersededAt"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := decodeState(tt.value)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("error = %v, want one containing %q", err, tt.wantErr)
				}
				if got != nil {
					t.Errorf("state = %v on error, want nil", got)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !maps.EqualFunc(got, tt.want, recordEqual) {
				t.Fatalf("state = %v, want %v", got, tt.want)
			}
			// Encoding is canonical: decoding it gives the same state, and
			// encoding that again gives the same string.
			enc := encodeState(got)
			back, err := decodeState(enc)
			if err != nil {
				t.Fatalf("decode %q: %v", enc, err)
			}
			if !maps.EqualFunc(back, got, recordEqual) || encodeState(back) != enc {
				t.Errorf("round trip changed the state: %q -> %v", enc, back)
			}
		})
	}
}

func TestEncodeStateIsCanonical(t *testing.T) {
	fpA := strings.Repeat("a", 64)
	fpB := strings.Repeat("b", 64)
	t0 := time.Date(2026, time.March, 1, 12, 0, 0, 0, time.UTC)
	s := cabundle.State{fpB: {FirstSeen: t0, SupersededAt: t0.Add(time.Hour)}, fpA: {FirstSeen: t0.In(time.FixedZone("x", 3600))}}
	want := `{"v":1,"cas":{"` + fpA + `":{"firstSeen":"2026-03-01T12:00:00Z"},"` + fpB + `":{"firstSeen":"2026-03-01T12:00:00Z","supersededAt":"2026-03-01T13:00:00Z"}}}`
	for range 10 {
		if got := encodeState(s); got != want {
			t.Fatalf("encodeState = %s, want %s", got, want)
		}
	}
}

func recordEqual(a, b cabundle.Record) bool {
	return a.FirstSeen.Equal(b.FirstSeen) && a.SupersededAt.Equal(b.SupersededAt)
}

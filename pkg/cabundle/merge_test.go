package cabundle

import (
	"bytes"
	"maps"
	"slices"
	"testing"
	"time"
)

func TestMergeKeepsPreviousCAsForTheOverlapAndPrunesExpiredOnes(t *testing.T) {
	const overlap = time.Hour
	caA := newCA(t, "ca-a", 60*24*time.Hour) // the CA before the last rotation
	caB := newCA(t, "ca-b", time.Hour)       // the CA in the source
	caC := newCA(t, "ca-c", 30*24*time.Hour) // another previous CA
	leaf := newCert(t, "leaf", now.Add(-time.Hour), now.Add(24*time.Hour), true)
	expiredCA := newCert(t, "expired", now.Add(-48*time.Hour), now.Add(-time.Minute), false)
	soonExpired := newCert(t, "expires-soon", now.Add(-48*time.Hour), now.Add(10*time.Minute), false)

	t0 := now.Add(-60 * 24 * time.Hour)
	rec := func(firstSeen, supersededAt time.Time) Record {
		return Record{FirstSeen: firstSeen, SupersededAt: supersededAt}
	}
	var never time.Time
	notAfterB := caB.cert.NotAfter.Add(time.Nanosecond).Sub(now)

	tests := []struct {
		name        string
		source      []byte
		serving     []byte // tls.crt; the source when nil, as the shipped self-signed CA serves itself
		current     [][]byte
		state       State
		overlap     time.Duration
		wantReason  Reason
		wantFP      []string
		wantState   State
		wantRequeue time.Duration
	}{
		{
			name:        "first_sync_writes_the_source",
			source:      caB.pem,
			overlap:     overlap,
			wantReason:  ReasonValid,
			wantFP:      []string{caB.fp()},
			wantState:   State{caB.fp(): rec(now, never)},
			wantRequeue: notAfterB,
		},
		{
			name:        "unchanged_source_keeps_its_record",
			source:      caB.pem,
			current:     [][]byte{caB.pem, caB.pem},
			state:       State{caB.fp(): rec(t0, never)},
			overlap:     overlap,
			wantReason:  ReasonValid,
			wantFP:      []string{caB.fp()},
			wantState:   State{caB.fp(): rec(t0, never)},
			wantRequeue: notAfterB,
		},
		{
			name:        "rotation_keeps_the_previous_ca",
			source:      caB.pem,
			current:     [][]byte{caA.pem},
			state:       State{caA.fp(): rec(t0, never)},
			overlap:     overlap,
			wantReason:  ReasonValid,
			wantFP:      []string{caB.fp(), caA.fp()},
			wantState:   State{caB.fp(): rec(now, never), caA.fp(): rec(t0, now)},
			wantRequeue: overlap,
		},
		{
			name:        "running_overlap_keeps_the_previous_ca",
			source:      caB.pem,
			current:     [][]byte{join(caB.pem, caA.pem)},
			state:       State{caB.fp(): rec(now.Add(-20*time.Minute), never), caA.fp(): rec(t0, now.Add(-20*time.Minute))},
			overlap:     overlap,
			wantReason:  ReasonValid,
			wantFP:      []string{caB.fp(), caA.fp()},
			wantState:   State{caB.fp(): rec(now.Add(-20*time.Minute), never), caA.fp(): rec(t0, now.Add(-20*time.Minute))},
			wantRequeue: 40 * time.Minute,
		},
		{
			name:        "elapsed_overlap_drops_the_previous_ca",
			source:      caB.pem,
			current:     [][]byte{join(caB.pem, caA.pem)},
			state:       State{caB.fp(): rec(now.Add(-overlap), never), caA.fp(): rec(t0, now.Add(-overlap))},
			overlap:     overlap,
			wantReason:  ReasonValid,
			wantFP:      []string{caB.fp()},
			wantState:   State{caB.fp(): rec(now.Add(-overlap), never)},
			wantRequeue: notAfterB,
		},
		{
			name:        "overlap_0_replaces",
			source:      caB.pem,
			current:     [][]byte{join(caA.pem, caC.pem)},
			state:       State{caA.fp(): rec(t0, never)},
			overlap:     0,
			wantReason:  ReasonValid,
			wantFP:      []string{caB.fp()},
			wantState:   State{caB.fp(): rec(now, never)},
			wantRequeue: notAfterB,
		},
		{
			name:        "previous_without_record_starts_its_overlap_now",
			source:      caB.pem,
			current:     [][]byte{caA.pem},
			overlap:     overlap,
			wantReason:  ReasonValid,
			wantFP:      []string{caB.fp(), caA.fp()},
			wantState:   State{caB.fp(): rec(now, never), caA.fp(): rec(now, now)},
			wantRequeue: overlap,
		},
		{
			name:        "expired_previous_ca_is_pruned",
			source:      caB.pem,
			current:     [][]byte{join(caB.pem, expiredCA.pem)},
			state:       State{caB.fp(): rec(t0, never), expiredCA.fp(): rec(t0, now.Add(-time.Minute))},
			overlap:     overlap,
			wantReason:  ReasonValid,
			wantFP:      []string{caB.fp()},
			wantState:   State{caB.fp(): rec(t0, never)},
			wantRequeue: notAfterB,
		},
		{
			name:        "requeue_at_the_earlier_expiry",
			source:      caB.pem,
			current:     [][]byte{join(caB.pem, soonExpired.pem)},
			state:       State{caB.fp(): rec(t0, never), soonExpired.fp(): rec(t0, now.Add(-time.Minute))},
			overlap:     overlap,
			wantReason:  ReasonValid,
			wantFP:      []string{caB.fp(), soonExpired.fp()},
			wantState:   State{caB.fp(): rec(t0, never), soonExpired.fp(): rec(t0, now.Add(-time.Minute))},
			wantRequeue: 10*time.Minute + time.Nanosecond,
		},
		{
			name:        "leaf_in_the_bundle_is_dropped",
			source:      caB.pem,
			current:     [][]byte{join(caB.pem, leaf.pem)},
			overlap:     overlap,
			wantReason:  ReasonValid,
			wantFP:      []string{caB.fp()},
			wantState:   State{caB.fp(): rec(now, never)},
			wantRequeue: notAfterB,
		},
		{
			name:        "duplicate_certificates_are_kept_once",
			source:      join(caB.pem, caB.pem),
			current:     [][]byte{join(caA.pem, caB.pem, caA.pem), caA.pem},
			state:       State{caB.fp(): rec(t0, never), caA.fp(): rec(t0, now.Add(-time.Minute))},
			overlap:     overlap,
			wantReason:  ReasonValid,
			wantFP:      []string{caB.fp(), caA.fp()},
			wantState:   State{caB.fp(): rec(t0, never), caA.fp(): rec(t0, now.Add(-time.Minute))},
			wantRequeue: overlap - time.Minute,
		},
		{
			name:        "damaged_entry_does_not_hide_intact_ones",
			source:      caB.pem,
			current:     [][]byte{[]byte("junk"), join(caA.pem, []byte("junk"))},
			state:       State{caA.fp(): rec(t0, never)},
			overlap:     overlap,
			wantReason:  ReasonValid,
			wantFP:      []string{caB.fp(), caA.fp()},
			wantState:   State{caB.fp(): rec(now, never), caA.fp(): rec(t0, now)},
			wantRequeue: overlap,
		},
		{
			name:        "previous_cas_most_recently_superseded_first",
			source:      caB.pem,
			current:     [][]byte{caC.pem, caA.pem},
			state:       State{caA.fp(): rec(t0, now.Add(-10*time.Minute)), caC.fp(): rec(t0, now.Add(-5*time.Minute))},
			overlap:     overlap,
			wantReason:  ReasonValid,
			wantFP:      []string{caB.fp(), caC.fp(), caA.fp()},
			wantState:   State{caB.fp(): rec(now, never), caA.fp(): rec(t0, now.Add(-10*time.Minute)), caC.fp(): rec(t0, now.Add(-5*time.Minute))},
			wantRequeue: 50 * time.Minute,
		},
		{
			name:        "readopted_ca_becomes_current_again",
			source:      caA.pem,
			current:     [][]byte{join(caB.pem, caA.pem)},
			state:       State{caB.fp(): rec(now.Add(-time.Minute), never), caA.fp(): rec(t0, now.Add(-time.Minute))},
			overlap:     overlap,
			wantReason:  ReasonValid,
			wantFP:      []string{caA.fp(), caB.fp()},
			wantState:   State{caA.fp(): rec(t0, never), caB.fp(): rec(now.Add(-time.Minute), now)},
			wantRequeue: overlap,
		},
		{
			name:        "bundle_of_2_in_the_source_newest_first",
			source:      join(caA.pem, caB.pem),
			overlap:     overlap,
			wantReason:  ReasonValid,
			wantFP:      []string{caB.fp(), caA.fp()},
			wantState:   State{caB.fp(): rec(now, never), caA.fp(): rec(now, never)},
			wantRequeue: caA.cert.NotAfter.Add(time.Nanosecond).Sub(now),
		},
		{
			name:       "invalid_source_yields_nothing",
			source:     leaf.pem,
			current:    [][]byte{caA.pem},
			state:      State{caA.fp(): rec(t0, never)},
			overlap:    overlap,
			wantReason: ReasonNotCA,
		},
		{
			// One write of the annotation with a time far ahead must not keep
			// a CA through every rotation: its overlap starts now.
			name:        "superseded_at_in_the_future_is_read_as_now",
			source:      caB.pem,
			current:     [][]byte{join(caB.pem, caA.pem)},
			state:       State{caB.fp(): rec(t0, never), caA.fp(): rec(t0, time.Date(2099, time.January, 1, 0, 0, 0, 0, time.UTC))},
			overlap:     overlap,
			wantReason:  ReasonValid,
			wantFP:      []string{caB.fp(), caA.fp()},
			wantState:   State{caB.fp(): rec(t0, never), caA.fp(): rec(t0, now)},
			wantRequeue: overlap,
		},
		{
			name:       "ca_that_does_not_verify_the_serving_certificate_yields_nothing",
			source:     caB.pem,
			serving:    caA.pem,
			current:    [][]byte{caA.pem},
			state:      State{caA.fp(): rec(t0, never)},
			overlap:    overlap,
			wantReason: ReasonNotIssuer,
		},
		{
			name:       "expired_source_yields_nothing",
			source:     expiredCA.pem,
			current:    [][]byte{expiredCA.pem},
			overlap:    overlap,
			wantReason: ReasonExpired,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			serving := tt.serving
			if serving == nil {
				serving = tt.source
			}
			res := Merge(Input{Source: tt.source, Serving: serving, Current: tt.current, State: tt.state, Overlap: tt.overlap, Now: now})
			if res.Verdict.Reason != tt.wantReason {
				t.Fatalf("verdict = %s, want %q", res.Verdict, tt.wantReason)
			}
			if !res.Verdict.Valid() {
				if res.Bundle != nil || res.Certificates != nil || res.State != nil {
					t.Errorf("invalid source produced a bundle: %d bytes, %d certificates, state %v", len(res.Bundle), len(res.Certificates), res.State)
				}
				return
			}
			if got := fingerprints(res.Certificates); !slices.Equal(got, tt.wantFP) {
				t.Errorf("certificates = %v, want %v", got, tt.wantFP)
			}
			if !bytes.Equal(res.Bundle, Encode(res.Certificates)) {
				t.Error("Bundle does not encode Certificates")
			}
			if got, err := Parse(res.Bundle); err != nil || !slices.Equal(fingerprints(got), tt.wantFP) {
				t.Errorf("Bundle parses to %v (err %v), want %v", fingerprints(got), err, tt.wantFP)
			}
			if !maps.EqualFunc(res.State, tt.wantState, recordEqual) {
				t.Errorf("state = %v, want %v", res.State, tt.wantState)
			}
			if res.RequeueAfter != tt.wantRequeue {
				t.Errorf("RequeueAfter = %v, want %v", res.RequeueAfter, tt.wantRequeue)
			}
		})
	}
}

func recordEqual(a, b Record) bool {
	return a.FirstSeen.Equal(b.FirstSeen) && a.SupersededAt.Equal(b.SupersededAt)
}

// TestMergeIsStable checks the property the syncer relies on to never loop:
// feeding a result back in, with the input in any order, yields the same
// bytes and the same state.
func TestMergeIsStable(t *testing.T) {
	caA := newCA(t, "ca-a", 60*24*time.Hour)
	caB := newCA(t, "ca-b", time.Hour)
	caC := newCA(t, "ca-c", 30*24*time.Hour)
	// A clock with sub-second digits, as the real one has.
	at := now.Add(123456789 * time.Nanosecond)

	tests := []struct {
		name    string
		current [][]byte
	}{
		{name: "previous_in_one_entry_is_stable", current: [][]byte{join(caA.pem, caC.pem)}},
		{name: "previous_in_reverse_order_is_stable", current: [][]byte{join(caC.pem, caA.pem)}},
		{name: "previous_spread_over_entries_is_stable", current: [][]byte{caC.pem, nil, caA.pem}},
	}
	var firstBundle []byte
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			first := Merge(Input{Source: caB.pem, Serving: caB.pem, Current: tt.current, Overlap: time.Hour, Now: at})
			if !first.Verdict.Valid() {
				t.Fatalf("verdict = %s", first.Verdict)
			}
			second := Merge(Input{Source: caB.pem, Serving: caB.pem, Current: [][]byte{first.Bundle}, State: first.State, Overlap: time.Hour, Now: at.Add(time.Second)})
			if !bytes.Equal(first.Bundle, second.Bundle) {
				t.Error("the bundle changed when fed back")
			}
			if !maps.EqualFunc(first.State, second.State, recordEqual) {
				t.Errorf("the state changed when fed back: %v, then %v", first.State, second.State)
			}
			for fp, r := range first.State {
				if r.FirstSeen.Nanosecond() != 0 || r.SupersededAt.Nanosecond() != 0 {
					t.Errorf("record %s has sub-second times: %v", fp, r)
				}
				if !r.SupersededAt.IsZero() && r.SupersededAt.Before(at) {
					t.Errorf("record %s: overlap starts %v, before the decision at %v", fp, r.SupersededAt, at)
				}
			}
			// Previous CAs superseded at the same time are ordered by NotBefore,
			// so every input order gives the same bytes.
			if firstBundle == nil {
				firstBundle = first.Bundle
			} else if !bytes.Equal(firstBundle, first.Bundle) {
				t.Error("the bundle depends on the order of the input")
			}
		})
	}
}

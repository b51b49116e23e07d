package syncer

import (
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/kyma-project/kim-snatch/pkg/cabundle"
)

// goldenState is the state that every golden file in testdata holds, each in
// its own format version: ca-state-v<N>.json is a value of StateAnnotation
// exactly as a syncer writing version N wrote it (v0 was produced by the
// encoder of the last unversioned release). A rotation from CA e024... to CA
// 9d7d... at 2026-05-02T09:30:01Z.
var goldenState = cabundle.State{
	"9d7d2039f8c1a6a1b3e4c6d0f2a9b8c7d6e5f4a3b2c1d0e9f8a7b6c5d4e3f2a1": {
		FirstSeen: time.Date(2026, time.May, 2, 9, 30, 1, 0, time.UTC),
	},
	"e024d7370a1b2c3d4e5f60718293a4b5c6d7e8f90a1b2c3d4e5f60718293a4b5": {
		FirstSeen:    time.Date(2026, time.March, 1, 12, 0, 0, 0, time.UTC),
		SupersededAt: time.Date(2026, time.May, 2, 9, 30, 1, 0, time.UTC),
	},
}

func goldenPath(version int) string {
	return filepath.Join("testdata", fmt.Sprintf("ca-state-v%d.json", version))
}

// The compatibility contract: this syncer reads every format version it, or
// any release before it, has ever written, into the same state. A new
// version must come with its golden file, and no golden file may be
// dropped.
func TestStateAnnotationReadsEveryFormatEverWritten(t *testing.T) {
	for version := 0; version <= StateFormatVersion; version++ {
		t.Run(fmt.Sprintf("v%d", version), func(t *testing.T) {
			data, err := os.ReadFile(goldenPath(version))
			if err != nil {
				t.Fatalf("every format version needs a golden file: %v", err)
			}
			got, err := decodeState(string(data))
			if err != nil {
				t.Fatal(err)
			}
			if !maps.EqualFunc(got, goldenState, recordEqual) {
				t.Errorf("state = %v, want %v", got, goldenState)
			}
		})
	}
	matches, err := filepath.Glob(filepath.Join("testdata", "ca-state-v*.json"))
	if err != nil {
		t.Fatal(err)
	}
	if len(matches) != StateFormatVersion+1 {
		t.Errorf("testdata holds %d golden state files %v, want one per version 0..%d", len(matches), matches, StateFormatVersion)
	}
}

// The syncer writes StateFormatVersion exactly as its golden file has it, so
// that a change of the format cannot go unnoticed: it needs a new version,
// and a new golden file.
func TestStateAnnotationWritesTheCurrentFormat(t *testing.T) {
	data, err := os.ReadFile(goldenPath(StateFormatVersion))
	if err != nil {
		t.Fatal(err)
	}
	if got := encodeState(goldenState); got != string(data) {
		t.Errorf("encodeState =\n  %s\nwant the golden v%d\n  %s", got, StateFormatVersion, data)
	}
}

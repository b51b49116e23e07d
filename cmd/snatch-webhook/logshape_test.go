package main

import (
	"path/filepath"
	"testing"

	"github.com/kyma-project/kim-snatch/pkg/admission"
	"github.com/kyma-project/kim-snatch/pkg/cmdline/logtest"
)

// The decision line that docs/operations.md ("Logs") shows has the keys,
// types and time format of the line the webhook writes for a patched Pod.
func TestDecisionLineIsAsDocumented(t *testing.T) {
	documented := logtest.DocumentedLine(t, filepath.Join("..", "..", "docs", "operations.md"), admission.MsgDecision)
	out := &logtest.Buffer{}
	url, client := serveWithLogger(t, binaryLogger(out))
	if err := post(client, url, review(t, testReviewUID)); err != nil {
		t.Fatal(err)
	}
	lines := logtest.Lines([]byte(out.String()), admission.MsgDecision)
	if len(lines) != 1 {
		t.Fatalf("%d decision lines, want 1:\n%s", len(lines), out.String())
	}
	logtest.CompareShape(t, documented, lines[0])
}

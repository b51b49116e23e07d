package main

import (
	"bytes"
	"encoding/json"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// promrules runs the command line as main does, with stdin, and returns
// its exit code and output.
func promrules(t *testing.T, stdin string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errOut bytes.Buffer
	code = run(args, strings.NewReader(stdin), &out, &errOut)
	return code, out.String(), errOut.String()
}

// testdata names a file of testdata/.
func testdata(name string) string { return filepath.Join("testdata", name) }

// decodeJSON decodes what a command printed into v.
func decodeJSON(t *testing.T, stdout string, v any) {
	t.Helper()
	if err := json.Unmarshal([]byte(stdout), v); err != nil {
		t.Fatalf("output is not JSON: %v\n%s", err, stdout)
	}
}

func itoa(n int) string { return strconv.Itoa(n) }

// equalJSON compares two values by their JSON, as the commands print them.
func equalJSON(t *testing.T, a, b any) bool {
	t.Helper()
	ja, err := json.Marshal(a)
	if err != nil {
		t.Fatal(err)
	}
	jb, err := json.Marshal(b)
	if err != nil {
		t.Fatal(err)
	}
	return bytes.Equal(ja, jb)
}

func strconvQuote(s string) string { return strconv.Quote(s) }

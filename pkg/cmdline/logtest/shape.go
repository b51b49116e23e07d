package logtest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/kyma-project/kim-snatch/pkg/cmdline"
)

// TimeKey is the key of a line's time.
const TimeKey = "ts"

// Field is one key of a line and the JSON type of its value: string,
// number, bool, array, object or null.
type Field struct{ Key, Type string }

// jsonBlock matches a fenced JSON block of a markdown document.
var jsonBlock = regexp.MustCompile("(?s)```json\n(.*?)\n```")

// DocumentedLine returns the example line of the markdown file at path
// whose message is msg: the one line of a json block that carries it.
func DocumentedLine(t testing.TB, path, msg string) []byte {
	t.Helper()
	doc, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var found [][]byte
	for _, m := range jsonBlock.FindAllSubmatch(doc, -1) {
		found = append(found, Lines(m[1], msg)...)
	}
	if len(found) != 1 {
		t.Fatalf("%s: %d example lines with the message %q, want one", path, len(found), msg)
	}
	return found[0]
}

// Lines returns the JSON lines of log whose message is msg.
func Lines(log []byte, msg string) [][]byte {
	var found [][]byte
	for line := range bytes.Lines(log) {
		var l struct{ Msg string }
		if json.Unmarshal(line, &l) == nil && l.Msg == msg {
			found = append(found, bytes.TrimSpace(line))
		}
	}
	return found
}

// Shape returns the keys of the JSON object line, in order, with their types.
func Shape(line []byte) ([]Field, error) {
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(line, &obj); err != nil { // one valid object, nothing after it
		return nil, err
	}
	dec := json.NewDecoder(bytes.NewReader(line))
	if _, err := dec.Token(); err != nil { // {
		return nil, err
	}
	var fields []Field
	for dec.More() {
		key, err := dec.Token()
		if err != nil {
			return nil, err
		}
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, err
		}
		fields = append(fields, Field{Key: key.(string), Type: jsonType(v)})
	}
	return fields, nil
}

func jsonType(v json.RawMessage) string {
	switch v[0] {
	case '"':
		return "string"
	case '{':
		return "object"
	case '[':
		return "array"
	case 't', 'f':
		return "bool"
	case 'n':
		return "null"
	}
	return "number"
}

// CompareShape fails t unless the line got has the shape of the line want
// and both times are written in cmdline.LogTimeLayout.
func CompareShape(t testing.TB, want, got []byte) {
	t.Helper()
	wantShape, err := Shape(want)
	if err != nil {
		t.Fatalf("documented line %s: %v", want, err)
	}
	gotShape, err := Shape(got)
	if err != nil {
		t.Fatalf("real line %s: %v", got, err)
	}
	if fmt.Sprint(wantShape) != fmt.Sprint(gotShape) {
		t.Errorf("the line has the keys\n  %v\nthe document shows\n  %v\nreal line:       %s\ndocumented line: %s", gotShape, wantShape, got, want)
	}
	for name, line := range map[string][]byte{"documented": want, "real": got} {
		if err := checkTime(line); err != nil {
			t.Errorf("%s line: %v: %s", name, err, line)
		}
	}
}

// checkTime checks that line's time is a string in cmdline.LogTimeLayout,
// which parses as RFC 3339 too, with all its digits.
func checkTime(line []byte) error {
	var l map[string]any
	if err := json.Unmarshal(line, &l); err != nil {
		return err
	}
	s, ok := l[TimeKey].(string)
	if !ok {
		return fmt.Errorf("%q is %T, want a string", TimeKey, l[TimeKey])
	}
	ts, err := time.Parse(cmdline.LogTimeLayout, s)
	if err != nil {
		return err
	}
	if again := ts.UTC().Format(cmdline.LogTimeLayout); again != s || !strings.HasSuffix(s, "Z") {
		return fmt.Errorf("%q is not %s in UTC, which writes %q", s, cmdline.LogTimeLayout, again)
	}
	if _, err := time.Parse(time.RFC3339, s); err != nil {
		return err
	}
	return nil
}

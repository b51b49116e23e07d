package logtest

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

func TestShapeListsEveryKeyWithItsTypeInOrder(t *testing.T) {
	tests := []struct {
		name    string
		line    string
		want    string
		wantErr bool
	}{
		{name: "every_type_is_listed_in_order", line: `{"s":"x","n":1.5,"b":true,"a":[1],"o":{"k":1},"z":null}`,
			want: "[{s string} {n number} {b bool} {a array} {o object} {z null}]"},
		{name: "order_kept", line: `{"b":1,"a":1}`, want: "[{b number} {a number}]"},
		{name: "not_an_object_is_refused", line: `[1]`, wantErr: true},
		{name: "trailing_text_is_refused", line: `{"a":1} x`, wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Shape([]byte(tt.line))
			if (err != nil) != tt.wantErr {
				t.Fatalf("Shape() error = %v, want error %v", err, tt.wantErr)
			}
			if !tt.wantErr && fmt.Sprint(got) != tt.want {
				t.Errorf("Shape() = %v, want %s", got, tt.want)
			}
		})
	}
}

func TestCheckTimeAcceptsOnlyMillisecondsInUTC(t *testing.T) {
	tests := []struct {
		name, line string
		wantErr    bool
	}{
		{name: "milliseconds_in_utc_are_accepted", line: `{"ts":"2026-01-01T00:00:00.100Z"}`},
		{name: "epoch_is_refused", line: `{"ts":1767225600.1}`, wantErr: true},
		{name: "seconds_only_are_refused", line: `{"ts":"2026-01-01T00:00:00Z"}`, wantErr: true},
		{name: "offset_is_refused", line: `{"ts":"2026-01-01T01:00:00.100+01:00"}`, wantErr: true},
		{name: "nanoseconds_are_refused", line: `{"ts":"2026-01-01T00:00:00.1000001Z"}`, wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if err := checkTime([]byte(tt.line)); (err != nil) != tt.wantErr {
				t.Errorf("checkTime() = %v, want error %v", err, tt.wantErr)
			}
		})
	}
}

func TestDocumentedLineIsTheJSONBlockLineWithTheMessage(t *testing.T) {
	path := filepath.Join(t.TempDir(), "doc.md")
	doc := "text {\"msg\":\"A\"}\n\n```json\n{\"msg\":\"B\"}\n{\"msg\":\"A\",\"k\":1}\n```\n\n```sh\n{\"msg\":\"A\"}\n```\n"
	if err := os.WriteFile(path, []byte(doc), 0o600); err != nil {
		t.Fatal(err)
	}
	if got, want := string(DocumentedLine(t, path, "A")), `{"msg":"A","k":1}`; got != want {
		t.Errorf("DocumentedLine() = %s, want %s", got, want)
	}
}

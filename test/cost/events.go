package cost

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"time"
)

// The actions of cmd/test2json this package reads.
const (
	ActionRun         = "run"
	ActionPass        = "pass"
	ActionFail        = "fail"
	ActionSkip        = "skip"
	ActionOutput      = "output"
	ActionBuildOutput = "build-output"
)

// Event is one event of `go test -json`, in the format of cmd/test2json.
type Event struct {
	Time    time.Time `json:",omitempty"`
	Action  string
	Package string `json:",omitempty"`
	Test    string `json:",omitempty"`
	Output  string `json:",omitempty"`
}

// parseEvent returns the event a line holds, or false when the line is not
// an event: a build or vet message that go test writes unwrapped.
func parseEvent(line []byte) (Event, bool) {
	var e Event
	if err := json.Unmarshal(line, &e); err != nil || e.Action == "" {
		return Event{}, false
	}
	return e, true
}

// ReadEvents reads the event stream of `go test -json` from r to its end
// and returns its events. It writes the Output of every output event to
// out as it arrives, so the run reads like `go test -v`, and every line
// that is not an event unchanged. An event without a Time gets the time
// now returns when it arrives, so that every event has a place on the
// clock of the samples.
func ReadEvents(r io.Reader, out io.Writer, now func() time.Time) ([]Event, error) {
	// A reader, not a Scanner: a test may write a line of any length.
	br := bufio.NewReader(r)
	var events []Event
	for {
		line, readErr := br.ReadBytes('\n')
		if len(line) > 0 {
			e, err := handleLine(line, out, now)
			if err != nil {
				return events, err
			}
			if e.Action != "" {
				events = append(events, e)
			}
		}
		if errors.Is(readErr, io.EOF) {
			return events, nil
		}
		if readErr != nil {
			return events, fmt.Errorf("read the event stream: %w", readErr)
		}
	}
}

// handleLine echoes one line as ReadEvents describes and returns its event,
// the zero Event for a line that is not one.
func handleLine(line []byte, out io.Writer, now func() time.Time) (Event, error) {
	e, ok := parseEvent(line)
	if !ok {
		if _, err := out.Write(line); err != nil {
			return Event{}, fmt.Errorf("pass a line of the command through: %w", err)
		}
		return Event{}, nil
	}
	if e.Time.IsZero() {
		e.Time = now()
	}
	// Build output carries compile errors, which the log would lack
	// otherwise.
	if e.Action == ActionOutput || e.Action == ActionBuildOutput {
		if _, err := io.WriteString(out, e.Output); err != nil {
			return Event{}, fmt.Errorf("write the output of %s %s: %w", e.Package, e.Test, err)
		}
	}
	return e, nil
}

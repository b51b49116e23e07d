package cost

import (
	"bytes"
	"strings"
	"testing"
	"time"
)

// at is seconds after the instant the synthetic runs of the tests begin.
func at(seconds float64) time.Time {
	begin := time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)
	return begin.Add(time.Duration(seconds * float64(time.Second)))
}

func TestReadEvents(t *testing.T) {
	long := strings.Repeat("x", 200_000)
	arrival := at(99)
	cases := []struct {
		name       string
		stream     string
		wantOut    string
		wantEvents []Event
	}{
		{
			name:       "output_events_print_their_output",
			stream:     `{"Time":"2030-01-02T03:04:06Z","Action":"output","Package":"p","Test":"TestA","Output":"=== RUN   TestA\n"}` + "\n",
			wantOut:    "=== RUN   TestA\n",
			wantEvents: []Event{{Time: at(1), Action: "output", Package: "p", Test: "TestA", Output: "=== RUN   TestA\n"}},
		},
		{
			name:       "other_events_print_nothing",
			stream:     `{"Time":"2030-01-02T03:04:06Z","Action":"pass","Package":"p","Test":"TestA","Elapsed":0.5}` + "\n",
			wantOut:    "",
			wantEvents: []Event{{Time: at(1), Action: "pass", Package: "p", Test: "TestA"}},
		},
		{
			name:    "lines_that_are_not_json_pass_unchanged",
			stream:  "# github.com/x/y\nvet: something {odd}\n",
			wantOut: "# github.com/x/y\nvet: something {odd}\n",
		},
		{
			name:    "json_without_an_action_passes_unchanged",
			stream:  `{"level":"info","msg":"hi"}` + "\n",
			wantOut: `{"level":"info","msg":"hi"}` + "\n",
		},
		{
			name:       "event_without_a_time_gets_its_arrival_time",
			stream:     `{"Action":"start","Package":"p"}` + "\n",
			wantEvents: []Event{{Time: arrival, Action: "start", Package: "p"}},
		},
		{
			name:       "build_output_prints_its_output",
			stream:     `{"ImportPath":"p","Action":"build-output","Output":"p/x.go:1: oops\n"}` + "\n",
			wantOut:    "p/x.go:1: oops\n",
			wantEvents: []Event{{Time: arrival, Action: "build-output", Output: "p/x.go:1: oops\n"}},
		},
		{
			name:    "a_line_longer_than_a_scanner_buffer_passes_whole",
			stream:  long + "\n",
			wantOut: long + "\n",
		},
		{
			name:       "a_last_line_without_a_newline_is_read",
			stream:     "plain\n" + `{"Time":"2030-01-02T03:04:07Z","Action":"output","Package":"p","Output":"ok\n"}`,
			wantOut:    "plain\nok\n",
			wantEvents: []Event{{Time: at(2), Action: "output", Package: "p", Output: "ok\n"}},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var out bytes.Buffer
			events, err := ReadEvents(strings.NewReader(tc.stream), &out, func() time.Time { return arrival })
			if err != nil {
				t.Fatal(err)
			}
			if out.String() != tc.wantOut {
				t.Errorf("output %q, want %q", out.String(), tc.wantOut)
			}
			if len(events) != len(tc.wantEvents) {
				t.Fatalf("events %+v, want %+v", events, tc.wantEvents)
			}
			for i := range events {
				if events[i] != tc.wantEvents[i] {
					t.Errorf("event %d %+v, want %+v", i, events[i], tc.wantEvents[i])
				}
			}
		})
	}
}

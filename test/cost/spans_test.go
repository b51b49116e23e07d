package cost

import (
	"testing"
)

// ev is an event of package p at seconds.
func ev(seconds float64, action, test string) Event {
	return Event{Time: at(seconds), Action: action, Package: "p", Test: test}
}

func span(test, result string, from, to float64) Span {
	return Span{Package: "p", Test: test, Result: result, Interval: Interval{From: at(from), To: at(to)}}
}

func TestSpans(t *testing.T) {
	cases := []struct {
		name         string
		events       []Event
		wantTests    []Span
		wantPackages []Span
	}{
		{
			name:         "top_level_test_spans_its_run_to_its_pass",
			events:       []Event{ev(0, "start", ""), ev(1, "run", "TestA"), ev(4, "pass", "TestA"), ev(5, "pass", "")},
			wantTests:    []Span{span("TestA", "pass", 1, 4)},
			wantPackages: []Span{span("", "pass", 0, 5)},
		},
		{
			name: "subtests_belong_to_their_top_level_test",
			events: []Event{ev(0, "start", ""), ev(1, "run", "TestA"), ev(2, "run", "TestA/x"), ev(3, "fail", "TestA/x"),
				ev(4, "fail", "TestA"), ev(5, "fail", "")},
			wantTests:    []Span{span("TestA", "fail", 1, 4)},
			wantPackages: []Span{span("", "fail", 0, 5)},
		},
		{
			name: "output_pause_and_cont_events_do_not_end_a_test",
			events: []Event{ev(0, "start", ""), ev(1, "run", "TestA"), ev(2, "output", "TestA"), ev(2, "pause", "TestA"),
				ev(3, "cont", "TestA"), ev(4, "skip", "TestA"), ev(5, "output", ""), ev(6, "pass", "")},
			wantTests:    []Span{span("TestA", "skip", 1, 4)},
			wantPackages: []Span{span("", "pass", 0, 6)},
		},
		{
			name: "test_run_twice_is_two_spans",
			events: []Event{ev(0, "start", ""), ev(1, "run", "TestA"), ev(2, "pass", "TestA"), ev(3, "run", "TestA"),
				ev(5, "fail", "TestA"), ev(6, "fail", "")},
			wantTests:    []Span{span("TestA", "pass", 1, 2), span("TestA", "fail", 3, 5)},
			wantPackages: []Span{span("", "fail", 0, 6)},
		},
		{
			name:         "test_without_an_end_is_incomplete_at_the_last_event_of_its_package",
			events:       []Event{ev(0, "start", ""), ev(1, "run", "TestA"), ev(2, "output", "TestA"), ev(7, "output", ""), ev(8, "fail", "")},
			wantTests:    []Span{span("TestA", ResultIncomplete, 1, 8)},
			wantPackages: []Span{span("", "fail", 0, 8)},
		},
		{
			name:         "package_without_an_end_is_incomplete_at_its_last_event",
			events:       []Event{ev(0, "start", ""), ev(1, "run", "TestA"), ev(3, "output", "TestA")},
			wantTests:    []Span{span("TestA", ResultIncomplete, 1, 3)},
			wantPackages: []Span{span("", ResultIncomplete, 0, 3)},
		},
		{
			name:         "package_without_a_start_event_starts_at_its_first_event",
			events:       []Event{ev(2, "output", ""), ev(3, "run", "TestA"), ev(4, "pass", "TestA"), ev(5, "pass", "")},
			wantTests:    []Span{span("TestA", "pass", 3, 4)},
			wantPackages: []Span{span("", "pass", 2, 5)},
		},
		{
			name:   "events_of_no_package_are_ignored",
			events: []Event{{Time: at(1), Action: "build-output", Output: "x"}},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			tests, packages := Spans(tc.events)
			assertSpans(t, "tests", tests, tc.wantTests)
			assertSpans(t, "packages", packages, tc.wantPackages)
		})
	}
}

func assertSpans(t *testing.T, what string, got, want []Span) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s %+v, want %+v", what, got, want)
	}
	for i := range got {
		if got[i] != want[i] {
			t.Errorf("%s[%d] %+v, want %+v", what, i, got[i], want[i])
		}
	}
}

func TestUncovered(t *testing.T) {
	iv := func(from, to float64) Interval { return Interval{From: at(from), To: at(to)} }
	cases := []struct {
		name    string
		within  Interval
		covered []Interval
		want    []Interval
	}{
		{name: "nothing_covered_leaves_the_whole", within: iv(0, 10), want: []Interval{iv(0, 10)}},
		{name: "tests_in_the_middle_leave_both_ends", within: iv(0, 10), covered: []Interval{iv(2, 4), iv(4, 7)},
			want: []Interval{iv(0, 2), iv(7, 10)}},
		{name: "overlapping_tests_in_any_order_leave_the_gaps_between", within: iv(0, 10), covered: []Interval{iv(6, 8), iv(1, 3), iv(2, 5)},
			want: []Interval{iv(0, 1), iv(5, 6), iv(8, 10)}},
		{name: "tests_covering_all_leave_nothing", within: iv(0, 10), covered: []Interval{iv(0, 6), iv(5, 10)}},
		{name: "tests_beyond_the_ends_are_cut", within: iv(2, 10), covered: []Interval{iv(0, 3), iv(9, 12)},
			want: []Interval{iv(3, 9)}},
		{name: "test_after_the_end_leaves_the_whole", within: iv(0, 10), covered: []Interval{iv(11, 12)},
			want: []Interval{iv(0, 10)}},
		{name: "empty_interval_leaves_nothing", within: iv(5, 5), covered: []Interval{iv(6, 7)}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := Uncovered(tc.within, tc.covered)
			if len(got) != len(tc.want) {
				t.Fatalf("got %+v, want %+v", got, tc.want)
			}
			for i := range got {
				if !got[i].From.Equal(tc.want[i].From) || !got[i].To.Equal(tc.want[i].To) {
					t.Errorf("[%d] %+v, want %+v", i, got[i], tc.want[i])
				}
			}
		})
	}
}

package trace

import (
	"fmt"
	"testing"

	"github.com/minikubelet/minikubelet/sim/vclock"
)

// TestRecorderForget drops kept events: indices stay those of every event emitted, what was
// forgotten is no longer returned, and forgetting backwards or past the end is harmless.
func TestRecorderForget(t *testing.T) {
	r, err := NewRecorder(RecorderOptions{Clock: vclock.New(vclock.Epoch), Keep: true})
	if err != nil {
		t.Fatal(err)
	}
	emit := func(from, to int) {
		for i := from; i < to; i++ {
			r.Emit(Event{Component: "c", Event: KindSet, Pod: fmt.Sprint(i)})
		}
	}
	pods := func(evs []Event) string {
		var s []string
		for _, e := range evs {
			s = append(s, e.Pod)
		}
		return fmt.Sprint(s)
	}
	emit(0, 5)
	r.Forget(3)
	if got := r.Len(); got != 5 {
		t.Errorf("Len() after Forget(3) = %d, want 5", got)
	}
	if got := pods(r.EventsSince(0)); got != "[3 4]" {
		t.Errorf("EventsSince(0) after Forget(3) = %s, want [3 4]", got)
	}
	if got := pods(r.EventsSince(4)); got != "[4]" {
		t.Errorf("EventsSince(4) after Forget(3) = %s, want [4]", got)
	}
	r.Forget(1) // backwards: nothing
	emit(5, 7)
	if got := pods(r.Events()); got != "[3 4 5 6]" {
		t.Errorf("Events() = %s, want [3 4 5 6]", got)
	}
	r.Forget(100) // past the end: everything
	if got := r.Len(); got != 7 {
		t.Errorf("Len() after forgetting everything = %d, want 7", got)
	}
	emit(7, 8)
	if got := pods(r.EventsSince(6)); got != "[7]" {
		t.Errorf("EventsSince(6) after forgetting everything and one more = %s, want [7]", got)
	}
}

// TestRecorderEachSince looks at the kept events from an index without a copy: the same events as
// EventsSince, in order, after a Forget that moved the kept ones to the front of the array and
// after one that dropped fewer than it kept, and a look that stops early.
func TestRecorderEachSince(t *testing.T) {
	r, err := NewRecorder(RecorderOptions{Clock: vclock.New(vclock.Epoch), Keep: true})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 10 {
		r.Emit(Event{Component: "c", Event: KindSet, Pod: fmt.Sprint(i)})
	}
	each := func(i, stopAt int) []string {
		var got []string
		r.EachSince(i, func(e *Event) bool {
			got = append(got, e.Pod)
			return len(got) != stopAt
		})
		return got
	}
	since := func(i int) []string {
		var got []string
		for _, e := range r.EventsSince(i) {
			got = append(got, e.Pod)
		}
		return got
	}
	for _, tc := range []struct {
		name   string
		forget int // 0: none
		from   int
		stopAt int // 0: never
		want   string
	}{
		{name: "everything", from: 0, want: "[0 1 2 3 4 5 6 7 8 9]"},
		{name: "from an index", from: 7, want: "[7 8 9]"},
		{name: "stopped", from: 2, stopAt: 2, want: "[2 3]"},
		{name: "after dropping fewer than kept", forget: 2, from: 0, want: "[2 3 4 5 6 7 8 9]"},
		{name: "after dropping more than kept", forget: 8, from: 0, want: "[8 9]"},
		{name: "past the end", from: 10, want: "[]"},
	} {
		if tc.forget > 0 {
			r.Forget(tc.forget)
		}
		if got := fmt.Sprint(each(tc.from, tc.stopAt)); got != tc.want {
			t.Errorf("%s: EachSince(%d) = %s, want %s", tc.name, tc.from, got, tc.want)
		}
		if tc.stopAt == 0 {
			if got, want := fmt.Sprint(since(tc.from)), tc.want; got != want {
				t.Errorf("%s: EventsSince(%d) = %s, want %s", tc.name, tc.from, got, want)
			}
		}
	}
	// The array the Forget moved the kept events in is appended to again.
	r.Emit(Event{Component: "c", Event: KindSet, Pod: "10"})
	if got := fmt.Sprint(each(9, 0)); got != "[9 10]" {
		t.Errorf("EachSince(9) after one more = %s, want [9 10]", got)
	}
}

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

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

// TestRecorderSince visits the same events EventsSince copies, before and after Forget, and
// stops when the loop breaks.
func TestRecorderSince(t *testing.T) {
	r, err := NewRecorder(RecorderOptions{Clock: vclock.New(vclock.Epoch), Keep: true})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 6 {
		r.Emit(Event{Component: "c", Event: KindSet, Pod: fmt.Sprint(i)})
	}
	r.Forget(2)
	visit := func(i, stop int) string {
		var s []string
		for ev := range r.Since(i) {
			s = append(s, fmt.Sprintf("%s@%d", ev.Pod, ev.Seq))
			if len(s) == stop {
				break
			}
		}
		return fmt.Sprint(s)
	}
	tests := []struct {
		from, stop int
		want       string
	}{
		{from: 0, want: "[2@3 3@4 4@5 5@6]"},
		{from: 3, want: "[3@4 4@5 5@6]"},
		{from: 3, stop: 2, want: "[3@4 4@5]"},
		{from: 6, want: "[]"},
		{from: 9, want: "[]"},
	}
	for _, tt := range tests {
		if got := visit(tt.from, tt.stop); got != tt.want {
			t.Errorf("Since(%d) stopping after %d = %s, want %s", tt.from, tt.stop, got, tt.want)
		}
		var copied []string
		for _, ev := range r.EventsSince(tt.from) {
			copied = append(copied, fmt.Sprintf("%s@%d", ev.Pod, ev.Seq))
		}
		if tt.stop == 0 && fmt.Sprint(copied) != tt.want {
			t.Errorf("EventsSince(%d) = %v, want %s", tt.from, copied, tt.want)
		}
	}
}

// chunkArrays returns the first element of the tail's array and of every full chunk's and
// spare's, which name the arrays the Recorder holds.
func chunkArrays(r *Recorder) map[*Event]bool {
	arrays := map[*Event]bool{}
	for _, c := range append(append([][]Event{r.tail}, r.full...), r.spares...) {
		if cap(c) > 0 {
			arrays[&c[:1][0]] = true
		}
	}
	return arrays
}

// TestRecorderForgetReusesChunks keeps emitting and forgetting, as a long replay does: once the
// chunks have been made for what is kept between two Forgets, emitting allocates nothing more,
// the same chunks are used round after round, and the events kept across each Forget stay in
// order.
func TestRecorderForgetReusesChunks(t *testing.T) {
	r, err := NewRecorder(RecorderOptions{Clock: vclock.New(vclock.Epoch), Keep: true})
	if err != nil {
		t.Fatal(err)
	}
	ev := Event{Component: "c", Event: KindSet, Pod: "p"}
	round := func() {
		for range 10 {
			r.Emit(ev)
		}
		r.Forget(r.Len() - 3) // keep the last three, as a window an expectEvent still looks at
	}
	// Past the first chunk's growth and into the second chunk.
	for range chunkLen/10 + 5 {
		round()
	}
	arrays := chunkArrays(r)
	// Through several chunks' worth of rounds, the same arrays.
	for i := range 5 * chunkLen / 10 {
		round()
		for a := range chunkArrays(r) {
			if !arrays[a] {
				t.Fatalf("round %d: the kept events went into a new chunk", i)
			}
		}
	}
	if allocs := testing.AllocsPerRun(3*chunkLen/10, round); allocs != 0 {
		t.Errorf("emitting 10 events and forgetting all but 3 allocates %v times a round, want 0", allocs)
	}
	want := r.Len()
	var seqs []uint64
	for ev := range r.Since(0) {
		seqs = append(seqs, ev.Seq)
	}
	if fmt.Sprint(seqs) != fmt.Sprint([]uint64{uint64(want - 2), uint64(want - 1), uint64(want)}) {
		t.Errorf("kept after the rounds = %v, want the Seqs of the last three of %d", seqs, want)
	}
}

// TestRecorderForgetLetsABurstGo checks that the chunks filled by a burst of events are let go
// once the replay keeps only a handful, that those every interval fills are kept, and that the
// kept events stay as they were.
func TestRecorderForgetLetsABurstGo(t *testing.T) {
	r, err := NewRecorder(RecorderOptions{Clock: vclock.New(vclock.Epoch), Keep: true})
	if err != nil {
		t.Fatal(err)
	}
	for range 100_000 {
		r.Emit(Event{Component: "c", Event: KindSet, Pod: "p"})
	}
	for range 100 {
		for range 10 {
			r.Emit(Event{Component: "c", Event: KindSet, Pod: "p"})
		}
		r.Forget(r.Len() - 3)
	}
	if got := len(chunkArrays(r)); got > 4 {
		t.Errorf("%d chunks held after the burst was forgotten, want at most 4", got)
	}
	// Rounds that fill about five chunks each time keep them: 5,000 events an instant, three
	// kept.
	round := func() {
		for range 5000 {
			r.Emit(Event{Component: "c", Event: KindSet, Pod: "p"})
		}
		r.Forget(r.Len() - 3)
	}
	for range 3 {
		round()
	}
	arrays := chunkArrays(r)
	for i := range 20 {
		round()
		for a := range chunkArrays(r) {
			if !arrays[a] {
				t.Fatalf("round %d of 5,000 events: the kept events went into a new chunk", i)
			}
		}
	}
	if allocs := testing.AllocsPerRun(5, round); allocs != 0 {
		t.Errorf("emitting 5,000 events and forgetting all but 3 allocates %v times a round, want 0", allocs)
	}
	var seqs []uint64
	for ev := range r.Since(0) {
		seqs = append(seqs, ev.Seq)
	}
	n := uint64(r.Len())
	if fmt.Sprint(seqs) != fmt.Sprint([]uint64{n - 2, n - 1, n}) {
		t.Errorf("kept = %v, want the Seqs of the last three of %d", seqs, n)
	}
}

// TestRecorderSinceBodyEmitsAndForgets emits and forgets from inside a Since loop, as a check
// that records what it found may: the loop yields the events kept when it started, unchanged,
// and the Forget takes effect once the loop ends. (A Recorder locked while the body ran hung
// here.)
func TestRecorderSinceBodyEmitsAndForgets(t *testing.T) {
	r, err := NewRecorder(RecorderOptions{Clock: vclock.New(vclock.Epoch), Keep: true})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 4 {
		r.Emit(Event{Component: "c", Event: KindSet, Pod: fmt.Sprint(i)})
	}
	var seen []string
	for ev := range r.Since(1) {
		seen = append(seen, ev.Pod)
		r.Emit(Event{Component: "c", Event: KindSet, Pod: "from-" + ev.Pod})
		r.Forget(r.Len())
		// A nested loop holds the Forget back too, and sees the events emitted so far.
		n := 0
		for range r.Since(0) {
			n++
		}
		if n == 0 {
			t.Errorf("a nested Since saw no event: the Forget was made under the outer loop")
		}
	}
	if want := []string{"1", "2", "3"}; fmt.Sprint(seen) != fmt.Sprint(want) {
		t.Errorf("Since(1) yielded %v, want %v (the events kept when it started)", seen, want)
	}
	if got := r.EventsSince(0); len(got) != 0 {
		t.Errorf("after the loop, EventsSince(0) = %d events, want 0: the Forget asked in the loop was not made", len(got))
	}
	if got := r.Len(); got != 7 {
		t.Errorf("Len() = %d, want 7", got)
	}
	r.Emit(Event{Component: "c", Event: KindSet, Pod: "after"})
	if got := r.EventsSince(0); len(got) != 1 || got[0].Pod != "after" {
		t.Errorf("EventsSince(0) after one more = %v, want the one event", got)
	}
}

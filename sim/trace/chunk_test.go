package trace

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/minikubelet/minikubelet/sim/vclock"
)

// chunkedRecorder returns a Recorder that keeps every event and writes it out as JSON into out,
// and a pointer to every event it stamped as Also received it: the sequence each accessor must
// return, taken on a path that does not go through the kept chunks.
func chunkedRecorder(t *testing.T, clk *vclock.Clock, out *bytes.Buffer) (*Recorder, *[]Event) {
	t.Helper()
	var stamped []Event
	r, err := NewRecorder(RecorderOptions{Clock: clk, Keep: true, Out: out, Format: JSON,
		Also: Func(func(e Event) { stamped = append(stamped, e) })})
	if err != nil {
		t.Fatal(err)
	}
	return r, &stamped
}

// emitNumbered emits n events, each with its own pod, message and pod list, the clock moving
// between them, so that two events out of place or copied wrong differ.
func emitNumbered(r *Recorder, clk *vclock.Clock, from, n int) {
	for i := from; i < from+n; i++ {
		clk.Advance(time.Millisecond)
		r.Emit(Event{Component: PodWorkers, Event: KindSet, Pod: fmt.Sprintf("default/p%d", i), UID: fmt.Sprint("uid-", i),
			Pods: []string{fmt.Sprint("a", i), fmt.Sprint("b", i)}, Message: fmt.Sprint("m", i), Delay: time.Duration(i)})
	}
}

// sameEvents reports whether a and b hold equal events in the same order, none being the same
// as an empty slice. It is cmp.Equal's answer without its reflection, which took seconds over
// these tests' thousands of events.
func sameEvents(a, b []Event) bool {
	return slices.EqualFunc(a, b, func(x, y Event) bool {
		if !slices.Equal(x.Pods, y.Pods) || (x.ExitCode == nil) != (y.ExitCode == nil) ||
			(x.ExitCode != nil && *x.ExitCode != *y.ExitCode) {
			return false
		}
		return x.T == y.T && x.Component == y.Component && x.Event == y.Event && x.Pod == y.Pod &&
			x.UID == y.UID && x.Op == y.Op && x.Source == y.Source && x.From == y.From && x.To == y.To &&
			x.Container == y.Container && x.Delay == y.Delay && x.Reason == y.Reason &&
			x.Message == y.Message && x.Func == y.Func && x.Seq == y.Seq && x.Cause == y.Cause && x.Node == y.Node
	})
}

// since returns what the Recorder yields from i on, copied.
func since(r *Recorder, i, stop int) []Event {
	var got []Event
	for ev := range r.Since(i) {
		got = append(got, *ev)
		if len(got) == stop {
			break
		}
	}
	return got
}

// TestRecorderChunkBoundaries keeps 0, 1, a chunk less one, a chunk, a chunk and one, and many
// chunks' worth of events, and checks that every accessor returns the events stamped, in stamp
// order: Events, EventsSince and Since from indices on either side of each boundary, Since
// broken off, the JSON written out, and the same after Forgets at the boundaries.
func TestRecorderChunkBoundaries(t *testing.T) {
	if n := reflect.TypeFor[Event]().NumField(); n != 19 {
		t.Fatalf("Event has %d fields, sameEvents compares 19: compare the new ones too", n)
	}
	sizes := []int{0, 1, chunkLen - 1, chunkLen, chunkLen + 1, 2*chunkLen - 1, 2 * chunkLen, 3*chunkLen + 5}
	for _, n := range sizes {
		t.Run(fmt.Sprintf("events=%d", n), func(t *testing.T) {
			clk := vclock.New(vclock.Epoch)
			var out bytes.Buffer
			r, stampedp := chunkedRecorder(t, clk, &out)
			emitNumbered(r, clk, 0, n)
			stamped := *stampedp
			if len(stamped) != n {
				t.Fatalf("Also received %d events, want %d", len(stamped), n)
			}
			if got := r.Len(); got != n {
				t.Errorf("Len() = %d, want %d", got, n)
			}
			if got := r.Events(); !sameEvents(stamped, got) {
				t.Errorf("Events() differs from the events stamped (-stamped +got):\n%s", cmp.Diff(stamped, got))
			}
			// The JSON of what Events returns is what was written out.
			var rendered []byte
			for _, e := range r.Events() {
				rendered = append(e.AppendJSON(rendered), '\n')
			}
			if !bytes.Equal(rendered, out.Bytes()) {
				t.Errorf("the JSON of Events() differs from the JSON written out")
			}
			for _, i := range []int{0, 1, chunkLen - 1, chunkLen, chunkLen + 1, 2 * chunkLen, n - 1, n, n + 1} {
				if i < 0 {
					continue
				}
				want := stamped[min(i, n):]
				if got := r.EventsSince(i); !sameEvents(want, got) {
					t.Errorf("EventsSince(%d) differs (-stamped +got):\n%s", i, cmp.Diff(want, got))
				}
				if got := since(r, i, 0); !sameEvents(want, got) {
					t.Errorf("Since(%d) differs (-stamped +got):\n%s", i, cmp.Diff(want, got))
				}
				// Broken off after a chunk's worth and one, over a boundary when i is on one.
				if stop := chunkLen + 1; len(want) > stop {
					if got := since(r, i, stop); !sameEvents(want[:stop], got) {
						t.Errorf("Since(%d) broken off after %d differs (-stamped +got):\n%s", i, stop, cmp.Diff(want[:stop], got))
					}
				}
			}
			// Forget at the boundaries, in order; each time the rest is what was stamped.
			for _, f := range []int{1, chunkLen - 1, chunkLen, chunkLen + 1, 2*chunkLen + 3, n} {
				r.Forget(f)
				want := stamped[min(f, n):]
				if got := r.Events(); !sameEvents(want, got) {
					t.Errorf("after Forget(%d), Events() differs (-stamped +got):\n%s", f, cmp.Diff(want, got))
				}
				if got := since(r, 0, 0); !sameEvents(want, got) {
					t.Errorf("after Forget(%d), Since(0) differs (-stamped +got):\n%s", f, cmp.Diff(want, got))
				}
				if got := r.Len(); got != n {
					t.Errorf("after Forget(%d), Len() = %d, want %d", f, got, n)
				}
			}
		})
	}
}

// TestRecorderChunksAgainstASlice emits, forgets and reads in a random order, across many chunk
// boundaries, and compares each read with a plain slice of every event stamped and a count of
// those forgotten: what the Recorder kept in one growing slice before it kept chunks.
func TestRecorderChunksAgainstASlice(t *testing.T) {
	if raceEnabled {
		t.Skip(oneGoroutineUnderRace)
	}
	rng := rand.New(rand.NewPCG(22, 1))
	clk := vclock.New(vclock.Epoch)
	var out bytes.Buffer
	r, stampedp := chunkedRecorder(t, clk, &out)
	forgotten := 0
	for step := range 3000 {
		switch op := rng.IntN(10); {
		case op < 6: // emit a few, or a burst over a boundary
			k := rng.IntN(40)
			if rng.IntN(20) == 0 {
				k = rng.IntN(3 * chunkLen)
			}
			emitNumbered(r, clk, len(*stampedp), k)
		case op < 8: // forget up to somewhere in what is kept, or past the end
			i := forgotten + rng.IntN(len(*stampedp)-forgotten+3)
			r.Forget(i)
			forgotten = max(forgotten, min(i, len(*stampedp)))
		default: // read from somewhere before, in or past what is kept
			i := rng.IntN(len(*stampedp) + 3)
			want := (*stampedp)[min(max(i, forgotten), len(*stampedp)):]
			got, copied := since(r, i, 0), r.EventsSince(i)
			if !sameEvents(want, got) || !sameEvents(want, copied) {
				t.Fatalf("step %d: from %d, %d events stamped and %d forgotten: Since yielded %d and EventsSince %d, want %d in stamp order",
					step, i, len(*stampedp), forgotten, len(got), len(copied), len(want))
			}
		}
		if got := r.Len(); got != len(*stampedp) {
			t.Fatalf("step %d: Len() = %d, want %d", step, got, len(*stampedp))
		}
	}
	if want, got := (*stampedp)[forgotten:], r.Events(); !sameEvents(want, got) {
		t.Errorf("Events() at the end: %d events, want the %d stamped after the %d forgotten", len(got), len(want), forgotten)
	}
	if len(*stampedp) < 5*chunkLen {
		t.Errorf("only %d events emitted: the test crossed too few chunk boundaries", len(*stampedp))
	}
}

// TestRecorderChunksConcurrent emits from two goroutines, as `run`'s runners do, while a third
// reads with Since, EventsSince and Events and forgets: each read is a run of consecutive Seqs,
// whatever chunk the emitters are filling or starting meanwhile. Run with -race, it checks that
// a Since loop reads nothing an Emit writes.
func TestRecorderChunksConcurrent(t *testing.T) {
	r, err := NewRecorder(RecorderOptions{Clock: vclock.New(vclock.Epoch), Keep: true})
	if err != nil {
		t.Fatal(err)
	}
	const perEmitter = 3*chunkLen + 7
	consecutive := func(what string, seqs []uint64) {
		for k := 1; k < len(seqs); k++ {
			if seqs[k] != seqs[k-1]+1 {
				t.Errorf("%s: Seq %d after %d, want consecutive Seqs", what, seqs[k], seqs[k-1])
				return
			}
		}
	}
	var wg sync.WaitGroup
	for range 2 {
		wg.Go(func() {
			for i := range perEmitter {
				r.Emit(Event{Component: PodWorkers, Event: KindSet, Pod: fmt.Sprint(i)})
			}
		})
	}
	wg.Go(func() {
		for round := 0; r.Len() < 2*perEmitter; round++ {
			var seqs []uint64
			for ev := range r.Since(r.Len() / 2) {
				seqs = append(seqs, ev.Seq)
			}
			consecutive("Since", seqs)
			seqs = seqs[:0]
			for _, ev := range r.EventsSince(0) {
				seqs = append(seqs, ev.Seq)
			}
			consecutive("EventsSince", seqs)
			if round%4 == 3 {
				r.Forget(r.Len() - chunkLen/2)
			}
		}
	})
	wg.Wait()
	var seqs []uint64
	for _, ev := range r.Events() {
		seqs = append(seqs, ev.Seq)
	}
	consecutive("Events", seqs)
	if len(seqs) == 0 || seqs[len(seqs)-1] != 2*perEmitter {
		t.Errorf("the last event kept has Seq %v, want %d", seqs[max(len(seqs)-1, 0):], 2*perEmitter)
	}
}

package trace

import (
	"strconv"
	"sync"
	"testing"

	"github.com/minikubelet/minikubelet/sim/vclock"
)

// TestRecorderSinceWhileAnotherGoroutineForgets reads with long Since loops in one goroutine
// while another emits and forgets nearly everything, so that chunks become spares and are
// reused as new tails all the time: each event a loop yields must still be the one its Seq
// names (its Pod is its Seq) and Seqs must be consecutive. A Forget that did not wait for a
// loop running in another goroutine would clear or reuse the chunks the loop reads (-race
// reports the write; the checks see cleared or newer events).
func TestRecorderSinceWhileAnotherGoroutineForgets(t *testing.T) {
	r, err := NewRecorder(RecorderOptions{Clock: vclock.New(vclock.Epoch), Keep: true})
	if err != nil {
		t.Fatal(err)
	}
	const total = 40 * chunkLen
	var wg sync.WaitGroup
	done := make(chan struct{})
	wg.Go(func() {
		defer close(done)
		for i := 1; i <= total; i++ {
			r.Emit(Event{Component: PodWorkers, Event: KindSet, Pod: strconv.Itoa(i)})
			if i%(chunkLen/4) == 0 {
				r.Forget(r.Len() - 3)
			}
		}
	})
	wg.Go(func() {
		for {
			select {
			case <-done:
				return
			default:
			}
			var prev uint64
			for ev := range r.Since(0) {
				if ev.Pod != strconv.FormatUint(ev.Seq, 10) {
					t.Errorf("Since yielded Seq %d with Pod %q: a slot cleared or reused under the loop", ev.Seq, ev.Pod)
					return
				}
				if prev != 0 && ev.Seq != prev+1 {
					t.Errorf("Since yielded Seq %d after %d", ev.Seq, prev)
					return
				}
				prev = ev.Seq
			}
		}
	})
	wg.Wait()
}

// TestRecorderCopiesOutliveReuse holds what Events and EventsSince returned, within the first
// tail and within a full chunk, while Forget drops everything and later emits refill the
// chunks (the spares reused): what was returned must not change, as it is a copy.
func TestRecorderCopiesOutliveReuse(t *testing.T) {
	for _, n := range []int{100, 3*chunkLen + 10} {
		r, err := NewRecorder(RecorderOptions{Clock: vclock.New(vclock.Epoch), Keep: true})
		if err != nil {
			t.Fatal(err)
		}
		for i := 1; i <= n; i++ {
			r.Emit(Event{Component: PodWorkers, Event: KindSet, Pod: strconv.Itoa(i)})
		}
		all, some := r.Events(), r.EventsSince(chunkLen/2) // some: within one chunk when n is small
		some2 := r.EventsSince(2*chunkLen + 1)             // within one full chunk for the large n
		r.Forget(r.Len())
		for i := n + 1; i <= n+4*chunkLen; i++ {
			r.Emit(Event{Component: PodWorkers, Event: KindSet, Pod: strconv.Itoa(i)})
		}
		for what, evs := range map[string][]Event{"Events": all, "EventsSince(mid)": some, "EventsSince(chunk 3)": some2} {
			for k, ev := range evs {
				if ev.Pod != strconv.FormatUint(ev.Seq, 10) || (k > 0 && ev.Seq != evs[k-1].Seq+1) {
					t.Errorf("n=%d: %s's copy changed after Forget and reuse: [%d] is Seq %d Pod %q", n, what, k, ev.Seq, ev.Pod)
					break
				}
			}
		}
	}
}

// TestRecorderForgetReleases checks that what forgotten events point to is let go: every slot
// the Recorder holds that is not a kept event (the dropped front of the first chunk, the spares)
// is the zero Event, so that no pod list or message of a forgotten event stays reachable.
func TestRecorderForgetReleases(t *testing.T) {
	r, err := NewRecorder(RecorderOptions{Clock: vclock.New(vclock.Epoch), Keep: true})
	if err != nil {
		t.Fatal(err)
	}
	check := func(when string) {
		t.Helper()
		first := r.tail
		if len(r.full) > 0 {
			first = r.full[0]
		}
		for k := range r.head {
			if !isZero(first[k]) {
				t.Fatalf("%s: dropped slot %d of the first chunk still holds %q", when, k, first[k].Pod)
			}
		}
		for s, c := range r.spares {
			for k, ev := range c[:cap(c)] {
				if !isZero(ev) {
					t.Fatalf("%s: spare %d slot %d still holds %q", when, s, k, ev.Pod)
				}
			}
		}
	}
	emit := func(n int) {
		for range n {
			r.Emit(Event{Component: PodWorkers, Event: KindSet, Pod: "a-long-pod-name", Pods: []string{"x"}, Message: "m"})
		}
	}
	emit(10)
	r.Forget(7)
	check("within the first tail")
	emit(5 * chunkLen)
	r.Forget(r.Len() - chunkLen/2)
	check("after a forget across chunks")
	emit(3 * chunkLen)
	r.Forget(r.Len())
	check("after forgetting everything")
}

func isZero(e Event) bool {
	return e.Pod == "" && e.Pods == nil && e.Message == "" && e.Seq == 0 && e.Component == "" && e.UID == ""
}

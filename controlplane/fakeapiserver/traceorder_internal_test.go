package fakeapiserver

import (
	"fmt"
	"slices"
	"sort"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/google/go-cmp/cmp"

	"github.com/minikubelet/minikubelet/sim/trace"
	"github.com/minikubelet/minikubelet/sim/vclock"
)

// podsTracer records the pods of the events it receives, in order; check, when set, runs at
// every event.
type podsTracer struct {
	mu    sync.Mutex
	pods  []string
	check func(trace.Event)
}

func (p *podsTracer) Emit(ev trace.Event) {
	if p.check != nil {
		p.check(ev)
	}
	p.mu.Lock()
	p.pods = append(p.pods, ev.Pod)
	p.mu.Unlock()
}

func batchOf(pods ...string) *[]trace.Event {
	b := new([]trace.Event)
	for _, p := range pods {
		*b = append(*b, trace.Event{Pod: p})
	}
	return b
}

// TestTraceOrderWaitsForEarlierBatches: a batch whose holder comes to emit it first waits for the
// batches cut before it, and a reader that saw them under the store lock waits until they are
// out.
func TestTraceOrderWaitsForEarlierBatches(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var o traceOrder
		tr := &podsTracer{}
		var second, reader sync.WaitGroup
		second.Go(func() { o.emit(tr, 2, batchOf("c"), 2) })
		reader.Go(func() { o.emit(tr, 0, nil, 1) })
		synctest.Wait()
		if len(tr.pods) != 0 {
			t.Fatalf("emitted %v before the first batch", tr.pods)
		}
		o.emit(tr, 1, batchOf("a", "b"), 1)
		second.Wait()
		reader.Wait()
		if diff := cmp.Diff([]string{"a", "b", "c"}, tr.pods); diff != "" {
			t.Errorf("the events' order (-want +got):\n%s", diff)
		}
		// Nothing to emit and everything out: no wait.
		o.emit(tr, 0, nil, 2)
	})
}

// TestPodWritesTracedAfterTheStoreLock: the pod writes' events are emitted with the store lock
// free, in the order of the writes' resource versions, when many goroutines write at once.
func TestPodWritesTracedAfterTheStoreLock(t *testing.T) {
	tr := &podsTracer{}
	srv, err := New(Options{Clock: vclock.New(vclock.Epoch), Tracer: tr})
	if err != nil {
		t.Fatal(err)
	}
	var held sync.Mutex
	var heldAt []string
	tr.check = func(ev trace.Event) {
		// Records an event emitted while the store lock is held: with one writer, by the
		// writer itself.
		if srv.store.mu.TryLock() {
			srv.store.mu.Unlock()
			return
		}
		held.Lock()
		heldAt = append(heldAt, ev.Pod)
		held.Unlock()
	}
	d := srv.Direct("test")
	create := func(name string) (uint64, error) {
		pod, err := d.CreatePod(t.Context(), &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default"},
			Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "i"}}}})
		if err != nil {
			return 0, err
		}
		return strconv.ParseUint(pod.ResourceVersion, 10, 64)
	}
	// One writer alone: the lock is free at its event.
	if _, err := create("alone"); err != nil {
		t.Fatal(err)
	}
	if len(heldAt) != 0 {
		t.Fatalf("the event of %v was emitted with the store lock held", heldAt)
	}
	// Many writers: the events come out in resource-version order.
	const writers, each = 8, 50
	rvs := map[string]uint64{"default/alone": 0}
	var mu sync.Mutex
	var wg sync.WaitGroup
	for w := range writers {
		wg.Go(func() {
			for i := range each {
				name := fmt.Sprintf("p-%d-%d", w, i)
				rv, err := create(name)
				if err != nil {
					t.Error(err)
					return
				}
				mu.Lock()
				rvs["default/"+name] = rv
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	want := make([]string, 0, len(rvs))
	for p := range rvs {
		want = append(want, p)
	}
	sort.Slice(want, func(i, j int) bool { return rvs[want[i]] < rvs[want[j]] })
	if !slices.Equal(want, tr.pods) {
		t.Errorf("the trace's pods are not in resource-version order:\nwant %v\n got %v", want, tr.pods)
	}
}

// TestTraceOrderWakesByTicket: holders waiting for different batches each return once the batch
// they wait for is out, not before, and no channel is left behind. (That a batch wakes only its
// own holders, what the channels are for, is not observable here: BenchmarkTraceOrderManyHolders
// shows its cost.)
func TestTraceOrderWakesByTicket(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var o traceOrder
		tr := &podsTracer{}
		const holders = 3
		var returned [holders + 1]atomic.Int32 // the holders returned, by the batch they wait for
		var wg sync.WaitGroup
		for through := uint64(1); through <= holders; through++ {
			for range 2 { // two holders for each batch: they share its channel
				wg.Go(func() {
					o.emit(tr, 0, nil, through)
					if got := o.done.Load(); got < through {
						t.Errorf("a holder waiting for batch %d returned with %d out", through, got)
					}
					returned[through].Add(1)
				})
			}
		}
		synctest.Wait()
		for ticket := uint64(1); ticket <= holders; ticket++ {
			o.emit(tr, ticket, batchOf(strconv.FormatUint(ticket, 10)), ticket)
			synctest.Wait()
			for through := uint64(1); through <= holders; through++ {
				want := int32(0)
				if through <= ticket {
					want = 2
				}
				if got := returned[through].Load(); got != want {
					t.Errorf("with batch %d out, %d holders waiting for %d returned, want %d",
						ticket, got, through, want)
				}
			}
		}
		wg.Wait()
		if len(o.waiting) != 0 {
			t.Errorf("channels left after every batch is out: %v", o.waiting)
		}
		if diff := cmp.Diff([]string{"1", "2", "3"}, tr.pods); diff != "" {
			t.Errorf("the events' order (-want +got):\n%s", diff)
		}
	})
}

// BenchmarkTraceOrderManyHolders: 1,000 holders of the store lock, each with a batch cut in
// turn, come to emit them in the reverse order, as a fleet's writers queue behind one another;
// each waits for the batches before its own. An operation is the 1,000 batches.
func BenchmarkTraceOrderManyHolders(b *testing.B) {
	const holders = 1000
	tr := trace.Func(func(trace.Event) {})
	var o traceOrder
	var next uint64
	b.ReportAllocs()
	for b.Loop() {
		first := next
		next += holders
		var wg sync.WaitGroup
		for i := uint64(holders); i >= 1; i-- {
			ticket := first + i
			wg.Go(func() { o.emit(tr, ticket, batchOf("p"), ticket) })
		}
		wg.Wait()
	}
}

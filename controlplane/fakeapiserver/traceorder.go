package fakeapiserver

import (
	"sync"
	"sync/atomic"

	"github.com/minikubelet/minikubelet/sim/trace"
)

// traceOrder emits the store's batches of trace events after the store lock is released, in the
// order the batches were cut under it. The pod writes' events used to be emitted while the store
// lock was held, so that they came out in resource-version order and before anything a reader of
// the store did with what it read; but emitting takes the trace recorder's lock, for which every
// component of a fleet waits, and a holder of the store lock waiting for it kept every other
// request waiting too. Now each batch gets a ticket under the store lock (its position among the
// batches), its holder emits it once the batch before is out, and every holder, writer or reader,
// waits after releasing the store lock until the batches cut before it released it are out. So
// the trace keeps both guarantees: the events in resource-version order, and a write's event
// before any event of a goroutine that saw the write under the store lock (a watch's reader, the
// writer itself when it returns). In a replay, driven by one goroutine, every batch is emitted at
// the unlock that cut it, where the store lock's holder used to emit its events: the same order.
type traceOrder struct {
	done atomic.Uint64 // the batches emitted, all of those with a ticket up to done
	mu   sync.Mutex    // guards the wait for done, with moved
	// moved is broadcast when done grows; its L is mu.
	moved sync.Cond
}

// traceBatches are the batches' slices, reused.
var traceBatches = sync.Pool{New: func() any { return new([]trace.Event) }}

// emit emits batch, whose ticket is ticket (0 for none, with no events), after the batches
// before it, then waits until every batch up to through (the batches cut when its caller
// released the store lock) is out.
func (o *traceOrder) emit(tr trace.Tracer, ticket uint64, batch *[]trace.Event, through uint64) {
	if ticket == 0 && o.done.Load() >= through {
		return // the common case: nothing to emit, and nothing cut before still on its way
	}
	o.mu.Lock()
	if o.moved.L == nil {
		o.moved.L = &o.mu
	}
	if ticket != 0 {
		for o.done.Load() < ticket-1 {
			o.moved.Wait()
		}
		o.mu.Unlock()
		o.emitBatch(tr, ticket, batch)
		o.mu.Lock()
	}
	for o.done.Load() < through {
		o.moved.Wait()
	}
	o.mu.Unlock()
}

// emitBatch emits batch, then marks ticket emitted and wakes the holders waiting for it. The
// mark is deferred: a tracer that panics or ends its goroutine (a panic that serveHTTP or
// Direct.do recovers) must still let the batches after this one out, or every later holder of
// the store lock would wait for this ticket forever. The batch then loses the events not yet
// emitted, as a panic under the store lock lost them before.
func (o *traceOrder) emitBatch(tr trace.Tracer, ticket uint64, batch *[]trace.Event) {
	defer func() {
		o.mu.Lock()
		o.done.Store(ticket)
		o.moved.Broadcast()
		o.mu.Unlock()
	}()
	for _, ev := range *batch {
		tr.Emit(ev)
	}
	clear(*batch)
	*batch = (*batch)[:0]
	traceBatches.Put(batch)
}

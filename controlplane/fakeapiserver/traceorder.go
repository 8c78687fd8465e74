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
//
// A holder that must wait parks on the channel of the ticket it waits for, which is closed when
// that batch is out, so each batch wakes only the holders waiting for it. They used to wait on
// one sync.Cond broadcast at every batch: in a 1,000-node fleet, where thousands of holders wait
// at once, each batch woke them all to find most still had to wait, and those wake-ups took
// about 8% of the fleet's CPU (docs/benchmarks.md, "`run --nodes 1000`'s CPU by component").
type traceOrder struct {
	// done counts the batches emitted: all those with a ticket up to done. Tickets are emitted
	// one at a time in their order, so done grows by one at each batch.
	done atomic.Uint64
	mu   sync.Mutex // guards waiting, and a waiter's check of done against the batch's mark
	// waiting holds, for each ticket some holder waits for, the channel closed once that batch
	// is out. A channel made inside a synctest bubble must not be closed from outside it, so a
	// server's store must stay inside the bubble that first waits on it, or outside every one.
	waiting map[uint64]chan struct{}
}

// traceBatches are the batches' slices, reused.
var traceBatches = sync.Pool{New: func() any { return new([]trace.Event) }}

// emit emits batch, whose ticket is ticket (0 for none, with no events), after the batches
// before it, then waits until every batch up to through (the batches cut when its caller
// released the store lock) is out.
func (o *traceOrder) emit(tr trace.Tracer, ticket uint64, batch *[]trace.Event, through uint64) {
	if ticket != 0 {
		o.wait(ticket - 1)
		o.emitBatch(tr, ticket, batch)
	}
	o.wait(through)
}

// wait returns once every batch up to ticket is out.
func (o *traceOrder) wait(ticket uint64) {
	if o.done.Load() >= ticket {
		return // the common case: nothing cut before still on its way
	}
	o.mu.Lock()
	if o.done.Load() >= ticket {
		o.mu.Unlock()
		return
	}
	ch := o.waiting[ticket]
	if ch == nil {
		if o.waiting == nil {
			o.waiting = map[uint64]chan struct{}{}
		}
		ch = make(chan struct{})
		o.waiting[ticket] = ch
	}
	o.mu.Unlock()
	<-ch
}

// markDone marks the batch of ticket, the one after done, emitted, and wakes the holders
// waiting for it. Those waiting for a later batch wait on; none waits for an earlier one.
func (o *traceOrder) markDone(ticket uint64) {
	o.mu.Lock()
	o.done.Store(ticket)
	if ch, ok := o.waiting[ticket]; ok {
		close(ch)
		delete(o.waiting, ticket)
	}
	o.mu.Unlock()
}

// emitBatch emits batch, then marks ticket emitted and wakes the holders waiting for it. The
// mark is deferred: a tracer that panics or ends its goroutine (a panic that serveHTTP or
// Direct.do recovers) must still let the batches after this one out, or every later holder of
// the store lock would wait for this ticket forever. The batch then loses the events not yet
// emitted, as a panic under the store lock lost them before.
func (o *traceOrder) emitBatch(tr trace.Tracer, ticket uint64, batch *[]trace.Event) {
	defer o.markDone(ticket)
	for _, ev := range *batch {
		tr.Emit(ev)
	}
	clear(*batch)
	*batch = (*batch)[:0]
	traceBatches.Put(batch)
}

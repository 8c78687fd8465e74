package podworkers

import "time"

// The workers keep two indexes so that Step and NextWake cost what is due rather than a scan of
// every worker: wake-ups by arrival and busy syncs by end. Both are lazy: an entry is never
// removed or updated in place; a worker whose key changes gets a new entry, and an entry that no
// longer describes its worker is dropped when it reaches the top.

// wakeEntry is a worker with a wake-up to pick up (key is its pendingSeq) or with a taken update
// to retry against the cache (key is its work's seq). Keys are unique: every one is a number of
// the Workers' sequence, given to one update.
type wakeEntry struct {
	key uint64
	s   *podStatus
}

func wakeLess(a, b wakeEntry) bool { return a.key < b.key }

// busyEntry is a sync whose function returned and whose blocking work ends at done.
type busyEntry struct {
	done time.Time
	seq  uint64
	s    *podStatus
	wk   *work
}

func busyLess(a, b busyEntry) bool {
	if !a.done.Equal(b.done) {
		return a.done.Before(b.done)
	}
	return a.seq < b.seq
}

// minHeap is a binary min-heap ordered by less. It is written out rather than built on
// container/heap so that pushing a struct does not allocate an interface value.
type minHeap[T any] struct {
	items []T
	less  func(a, b T) bool
}

func (h *minHeap[T]) len() int { return len(h.items) }

// peek returns the smallest item; the heap must not be empty.
func (h *minHeap[T]) peek() T { return h.items[0] }

func (h *minHeap[T]) push(x T) {
	h.items = append(h.items, x)
	i := len(h.items) - 1
	for i > 0 {
		parent := (i - 1) / 2
		if !h.less(h.items[i], h.items[parent]) {
			break
		}
		h.items[i], h.items[parent] = h.items[parent], h.items[i]
		i = parent
	}
}

// pop removes and returns the smallest item; the heap must not be empty.
func (h *minHeap[T]) pop() T {
	top := h.items[0]
	last := len(h.items) - 1
	h.items[0] = h.items[last]
	var zero T
	h.items[last] = zero // let the worker be collected once forgotten
	h.items = h.items[:last]
	for i := 0; ; {
		smallest := i
		if l := 2*i + 1; l < last && h.less(h.items[l], h.items[smallest]) {
			smallest = l
		}
		if r := 2*i + 2; r < last && h.less(h.items[r], h.items[smallest]) {
			smallest = r
		}
		if smallest == i {
			break
		}
		h.items[i], h.items[smallest] = h.items[smallest], h.items[i]
		i = smallest
	}
	return top
}

// wake indexes s if it now has a wake-up to pick up. Every place that signals a worker calls it.
// A worker with a taken update is not indexed here: the Step that took the update either runs it
// or keeps it in waiting.
func (w *Workers) wake(s *podStatus) {
	if s.work != nil || !s.flags.signalled || s.state == Finished {
		return
	}
	w.pushWake(s, s.pendingSeq)
}

// pushWake adds an entry for s under key unless s already has a live one with that key. During a
// pass of advance the entry waits in deferred: the pass only visits the workers that were due when
// it began.
func (w *Workers) pushWake(s *podStatus, key uint64) {
	if s.wakeKey == key {
		return
	}
	s.wakeKey = key
	e := wakeEntry{key: key, s: s}
	if w.inPass {
		w.deferred = append(w.deferred, e)
		return
	}
	w.wakes.push(e)
}

// endPass moves the entries deferred during a pass into the index.
func (w *Workers) endPass() {
	w.inPass = false
	for i, e := range w.deferred {
		w.wakes.push(e)
		w.deferred[i] = wakeEntry{}
	}
	w.deferred = w.deferred[:0]
}

// popWake returns the next worker of the pass in arrival order, skipping stale entries. held
// workers are set aside in deferred, so they come back once released.
func (w *Workers) popWake() (*podStatus, bool) {
	for w.wakes.len() > 0 {
		e := w.wakes.pop()
		s := e.s
		if s.wakeKey != e.key {
			continue // superseded by a newer entry, or already visited
		}
		s.wakeKey = 0
		if s.flags.forgotten || s.state == Finished {
			continue
		}
		if w.held[s.uid] {
			w.pushWake(s, e.key)
			continue
		}
		switch wk := s.work; {
		case wk == nil && s.flags.signalled && s.pendingSeq == e.key,
			wk != nil && !wk.called && wk.seq == e.key:
			return s, true
		}
	}
	return nil, false
}

// retryWaiting puts the workers whose taken update waits for the cache back in arrival order. Step
// calls it once: the cache only gets newer at a PLEG relist, which happens between Steps, so asking
// again within one Step would get the same answer.
func (w *Workers) retryWaiting() {
	for i, s := range w.waiting {
		w.waiting[i] = nil
		if wk := s.work; !s.flags.forgotten && wk != nil && !wk.called {
			w.pushWake(s, wk.seq)
		}
	}
	w.waiting = w.waiting[:0]
}

// pushBusy indexes the busy sync wk of s by its end.
func (w *Workers) pushBusy(s *podStatus, wk *work) {
	w.busy.push(busyEntry{done: wk.done, seq: wk.seq, s: s, wk: wk})
}

// peekBusy returns the busy sync that ends first, dropping stale entries.
func (w *Workers) peekBusy() (busyEntry, bool) {
	for w.busy.len() > 0 {
		e := w.busy.peek()
		if !e.s.flags.forgotten && e.s.work == e.wk && e.wk.called && e.wk.done.Equal(e.done) {
			return e, true
		}
		w.busy.pop()
	}
	return busyEntry{}, false
}

// hasWake reports whether a worker that is not held has a wake-up it has not picked up. It looks
// only at the indexed wake-ups, which outside Step are the ones that arrived since the last Step.
func (w *Workers) hasWake() bool {
	for _, e := range w.wakes.items {
		s := e.s
		if s.wakeKey == e.key && !s.flags.forgotten && s.state != Finished && !w.held[s.uid] &&
			s.work == nil && s.flags.signalled && s.pendingSeq == e.key {
			return true
		}
	}
	return false
}

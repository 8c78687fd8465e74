package apf

import "slices"

// Queue holds the requests waiting for the lock and chooses the next one: the oldest exempt
// waiter if there is one, unless exempt waiters took the last ExemptRun turns while limited ones
// waited; else the limited level whose turns are furthest behind its share, and in it the flow
// whose turn it is. It is a pure core: no goroutines, no clock, one caller at a time (Lock holds
// its own mutex around it).
//
// Exempt requests go first, but not without bound. In kube-apiserver they take no seats and the
// limited levels keep theirs, so a stream of exempt requests, however steady, does not hold
// node-high's lease renewals back; here one lock is all the levels share, and a stream of exempt
// waiters that never ends would take every turn. So after ExemptRun exempt turns in a row taken
// while a limited waiter waited, one limited turn comes next: a limited waiter at the head of
// the limited order waits at most ExemptRun exempt turns.
//
// The levels share turns by stride scheduling: a level's pass grows by strideUnit/shares at each
// turn it takes, and the waiting level with the smallest pass goes next, so that over a busy
// stretch node-high (40 shares) gets four turns for each one of leader-election's (10). A level
// that was idle rejoins at the pass of the latest turn (vtime) rather than its own older one: like
// APF's fair queuing, which measures a queue's finish times from the virtual time now, an idle
// level saves up no credit to take a burst of turns with. Within a level the flows take one turn
// each in the order they started waiting (round-robin), and each flow's waiters go first come,
// first served.
type Queue[W comparable] struct {
	exempt fifo[W]
	// exemptRun is the exempt turns taken in a row while a limited waiter waited.
	exemptRun int
	levels    [numLevels]level[W]
	vtime     uint64 // the pass of the level that took the latest limited turn
	seq       uint64 // arrivals, to break ties between levels by their oldest waiter
	n         int
	free      []*flow[W] // emptied flows, reused
}

// ExemptRun is how many exempt turns in a row the queue gives while limited waiters wait before
// it gives one of them a turn: one, so that exempt and limited turns alternate while both wait.
// In kube-apiserver exempt requests never delay node-high's lease renewals; here, with one lock,
// they can only be kept from taking more than every other turn. A longer run held the renewals
// back beside a stream of exempt creates over HTTP (four or eight in a row: the longest lease
// update 3 to 5 s on a loaded machine, against about 1 s with one) without making those creates
// faster; in-process creates beside nodes that write without pause pay for it (docs/benchmarks.md,
// "Exempt and limited turns alternate").
const ExemptRun = 1

// strideUnit is a multiple of every level's shares (600 = lcm(5, 10, 20, 30, 40, 100)), so that
// every stride is a whole number.
const strideUnit = 600

// level is one limited level's waiters: its flows with waiters, in a ring whose head goes next.
type level[W comparable] struct {
	pass  uint64
	n     int
	head  *flow[W]
	flows map[Flow]*flow[W]
}

// flow is one flow's waiters, oldest first, and its place in its level's ring.
type flow[W comparable] struct {
	key        Flow
	waiters    fifo[W]
	prev, next *flow[W]
}

// fifo is a first-come, first-served queue of waiters, each with its arrival.
type fifo[W comparable] struct {
	items []waiter[W]
	head  int
}

type waiter[W comparable] struct {
	w   W
	seq uint64
}

func (f *fifo[W]) push(w waiter[W]) { f.items = append(f.items, w) }
func (f *fifo[W]) len() int         { return len(f.items) - f.head }
func (f *fifo[W]) front() waiter[W] { return f.items[f.head] }

func (f *fifo[W]) pop() waiter[W] {
	w := f.items[f.head]
	var zero waiter[W]
	f.items[f.head] = zero
	f.head++
	switch {
	case f.head == len(f.items):
		// Empty: start over at the front of the same array.
		f.items, f.head = f.items[:0], 0
	case f.head >= compactMin && f.head*2 >= len(f.items):
		// A fifo that never empties (a busy lock always has a waiter) would otherwise only
		// grow, keeping a slot for every waiter it ever held. Moving the waiters left to the
		// front once the popped slots are at least half of the array costs at most one copy per
		// pop, and keeps the array within about twice the most waiters it held at once.
		n := copy(f.items, f.items[f.head:])
		clear(f.items[n:])
		f.items, f.head = f.items[:n], 0
	}
	return w
}

// remove takes w out of the fifo wherever it waits, and reports whether it was there.
func (f *fifo[W]) remove(w W) bool {
	for i := f.head; i < len(f.items); i++ {
		if f.items[i].w == w {
			f.items = slices.Delete(f.items, i, i+1)
			if f.head == len(f.items) {
				f.items, f.head = f.items[:0], 0
			}
			return true
		}
	}
	return false
}

// compactMin is the popped slots below which a fifo that is not empty is not compacted: a few
// slots are not worth the copy.
const compactMin = 32

// keptCap is the largest array an emptied flow keeps for its next use; a flow that once had many
// waiters gives its array back rather than hold it on the free list.
const keptCap = 64

// Len is the number of waiters.
func (q *Queue[W]) Len() int { return q.n }

// Push adds a waiter of class c.
func (q *Queue[W]) Push(c Class, w W) {
	q.seq++
	q.n++
	it := waiter[W]{w: w, seq: q.seq}
	if c.Level == Exempt || c.Level >= numLevels {
		q.exempt.push(it)
		return
	}
	l := &q.levels[c.Level]
	if l.n == 0 {
		l.pass = max(l.pass, q.vtime)
	}
	l.n++
	if l.flows == nil {
		l.flows = map[Flow]*flow[W]{}
	}
	f := l.flows[c.Flow]
	if f == nil {
		f = q.newFlow(c.Flow)
		l.flows[c.Flow] = f
		// A flow that starts waiting joins the ring last: every flow already waiting takes
		// its turn first.
		if l.head == nil {
			f.prev, f.next, l.head = f, f, f
		} else {
			tail := l.head.prev
			f.prev, f.next = tail, l.head
			tail.next, l.head.prev = f, f
		}
	}
	f.waiters.push(it)
}

func (q *Queue[W]) newFlow(key Flow) *flow[W] {
	if n := len(q.free); n > 0 {
		f := q.free[n-1]
		q.free = q.free[:n-1]
		f.key = key
		return f
	}
	return &flow[W]{key: key}
}

// Pop removes and returns the waiter that goes next, and false when there is none.
func (q *Queue[W]) Pop() (W, bool) {
	if q.exempt.len() > 0 {
		if q.n == q.exempt.len() {
			// Nobody else waits: the run counts only turns a limited waiter waited through.
			q.exemptRun = 0
			q.n--
			return q.exempt.pop().w, true
		}
		if q.exemptRun < ExemptRun {
			q.exemptRun++
			q.n--
			return q.exempt.pop().w, true
		}
	}
	q.exemptRun = 0
	var best *level[W]
	var bestLevel Level
	for i := range q.levels {
		l := &q.levels[i]
		if l.n == 0 {
			continue
		}
		if best == nil || l.pass < best.pass || (l.pass == best.pass && l.next() < best.next()) {
			best, bestLevel = l, Level(i)
		}
	}
	if best == nil {
		var zero W
		return zero, false
	}
	q.n--
	q.vtime = best.pass
	best.pass += strideUnit / shares[bestLevel]
	best.n--
	f := best.head
	w := f.waiters.pop()
	best.head = f.next
	if f.waiters.len() == 0 {
		q.leave(best, f)
	}
	return w.w, true
}

// leave takes f, whose last waiter went, out of l's ring, and joins it again last when it next
// waits.
func (q *Queue[W]) leave(l *level[W], f *flow[W]) {
	if f.next == f {
		l.head = nil
	} else {
		f.prev.next, f.next.prev = f.next, f.prev
		if l.head == f {
			l.head = f.next
		}
	}
	delete(l.flows, f.key)
	items := f.waiters.items[:0]
	if cap(items) > keptCap {
		items = nil
	}
	*f = flow[W]{waiters: fifo[W]{items: items}}
	q.free = append(q.free, f)
}

// Remove takes w, a waiter of class c, out of the queue before its turn, and reports whether
// it was there: a request whose client gave up while it waited leaves its queue, as APF ejects
// it. The turns already taken stand (the level's pass, the exempt run), as in APF, where a
// request that leaves its queue leaves the virtual times of the others alone.
func (q *Queue[W]) Remove(c Class, w W) bool {
	if c.Level == Exempt || c.Level >= numLevels {
		if !q.exempt.remove(w) {
			return false
		}
		q.n--
		return true
	}
	l := &q.levels[c.Level]
	f := l.flows[c.Flow]
	if f == nil || !f.waiters.remove(w) {
		return false
	}
	q.n--
	l.n--
	if f.waiters.len() == 0 {
		q.leave(l, f)
	}
	return true
}

// next is the arrival of l's next waiter (the oldest of the flow at the ring's head), which
// breaks a tie between two levels' passes in favour of the one whose next waiter came first.
func (l *level[W]) next() uint64 { return l.head.waiters.front().seq }

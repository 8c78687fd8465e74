package replay

import (
	"slices"
	"time"
)

// schedule is which nodes the engine settles, so that an instant costs what its due nodes do
// and not what the fleet does. It keeps every node's next wake in a heap, kept up to date
// incrementally (a node's wake is worked out again only after the engine settled it or
// something reached it), and the set of nodes a pass settles.
//
// A node is settled at an instant when its wake has come, or when something from outside
// reached it: a step that acted on it or on the world every node shares, a pod write the shared
// watch routed to it. Once settled, a node that is still due (kubelet.Due) is settled again in
// the next pass, as before. A node that is not due and that nothing reached is not settled at
// all: a Settle of it would do nothing.
//
// The passes keep the nodes' order: a node reached while a pass is settling the nodes before it
// is settled later in the same pass, one reached after its turn in the next, exactly when a loop
// over every node in order asking each whether it is due would settle it.
type schedule struct {
	// wakes is a min-heap of node indices by their next wake; at is each node's wake (the zero
	// time: none) and pos its place in wakes.
	wakes []int
	at    []time.Time
	pos   []int

	// cur[head:] is the sorted set of nodes the current pass still settles; next those the next
	// pass settles. inCur and inNext say whether a node is in either.
	cur, next     []int
	head          int
	inCur, inNext []bool
	// cursor is the index of the node the pass is settling; past the last node between two
	// passes, so that what is reached then goes to the next pass.
	cursor int
	// touched lists the nodes settled or reached during the instant, whose wakes are worked out
	// again when it ends.
	touched   []int
	isTouched []bool
}

func newSchedule(nodes int) *schedule {
	s := &schedule{
		at: make([]time.Time, nodes), pos: make([]int, nodes),
		inCur: make([]bool, nodes), inNext: make([]bool, nodes), isTouched: make([]bool, nodes),
		cursor: nodes,
	}
	for i := range nodes {
		s.pos[i] = i
		s.wakes = append(s.wakes, i)
	}
	return s
}

// reach marks node i as reached from outside: it is settled in this pass if its turn has not
// come yet, else in the next (the first pass of the next settle, between two).
func (s *schedule) reach(i int) {
	s.touch(i)
	if i > s.cursor {
		if !s.inCur[i] {
			s.inCur[i] = true
			at, _ := slices.BinarySearch(s.cur[s.head:], i)
			s.cur = slices.Insert(s.cur, s.head+at, i)
		}
		return
	}
	s.again(i)
}

// again puts node i in the next pass.
func (s *schedule) again(i int) {
	s.touch(i)
	if !s.inNext[i] {
		s.inNext[i] = true
		s.next = append(s.next, i)
	}
}

func (s *schedule) touch(i int) {
	if !s.isTouched[i] {
		s.isTouched[i] = true
		s.touched = append(s.touched, i)
	}
}

// begin starts a settle at now: the nodes whose wake has come join those already reached.
func (s *schedule) begin(now time.Time) {
	s.dueAt(0, now)
}

// dueAt puts in the next pass the nodes of the heap under position p whose wake is at or before
// now: the heap's order means only the branches that start with one need looking at.
func (s *schedule) dueAt(p int, now time.Time) {
	if p >= len(s.wakes) {
		return
	}
	i := s.wakes[p]
	if t := s.at[i]; t.IsZero() || t.After(now) {
		return
	}
	s.again(i)
	s.dueAt(2*p+1, now)
	s.dueAt(2*p+2, now)
}

// pass starts a pass over the nodes put in the next pass, in the nodes' order; it reports
// whether there are any.
func (s *schedule) pass() bool {
	s.cur, s.next, s.head = s.next, s.cur[:0], 0
	slices.Sort(s.cur)
	for _, i := range s.cur {
		s.inNext[i], s.inCur[i] = false, true
	}
	s.cursor = -1
	return len(s.cur) > 0
}

// take returns the next node of the pass, in order; false once the pass has none left, which
// ends its loop over the nodes.
func (s *schedule) take() (int, bool) {
	if s.head == len(s.cur) {
		s.cursor = len(s.at)
		return 0, false
	}
	i := s.cur[s.head]
	s.head++
	s.inCur[i] = false
	s.cursor = i
	return i, true
}

// end works out again, with wake, the next wake of every node settled or reached during the
// instant; the others' have not moved.
func (s *schedule) end(wake func(i int) time.Time) {
	for _, i := range s.touched {
		s.isTouched[i] = false
		s.set(i, wake(i))
	}
	s.touched = s.touched[:0]
}

// earliest returns the earliest wake of any node; false if none has one.
func (s *schedule) earliest() (time.Time, bool) {
	if len(s.wakes) == 0 {
		return time.Time{}, false
	}
	t := s.at[s.wakes[0]]
	return t, !t.IsZero()
}

// set gives node i the wake t (zero: none) and restores the heap's order.
func (s *schedule) set(i int, t time.Time) {
	s.at[i] = t
	p := s.pos[i]
	if !s.up(p) {
		s.down(p)
	}
}

// before orders the heap: the earlier wake first, the zero time (no wake) last, and the lower
// node index between equal wakes so that the order does not depend on the heap's history.
func (s *schedule) before(a, b int) bool {
	ta, tb := s.at[a], s.at[b]
	switch {
	case ta.IsZero() != tb.IsZero():
		return tb.IsZero()
	case !ta.Equal(tb):
		return ta.Before(tb)
	}
	return a < b
}

func (s *schedule) swap(p, q int) {
	s.wakes[p], s.wakes[q] = s.wakes[q], s.wakes[p]
	s.pos[s.wakes[p]], s.pos[s.wakes[q]] = p, q
}

func (s *schedule) up(p int) bool {
	moved := false
	for p > 0 {
		parent := (p - 1) / 2
		if !s.before(s.wakes[p], s.wakes[parent]) {
			break
		}
		s.swap(p, parent)
		p, moved = parent, true
	}
	return moved
}

func (s *schedule) down(p int) {
	for {
		c := 2*p + 1
		if c >= len(s.wakes) {
			return
		}
		if r := c + 1; r < len(s.wakes) && s.before(s.wakes[r], s.wakes[c]) {
			c = r
		}
		if !s.before(s.wakes[c], s.wakes[p]) {
			return
		}
		s.swap(p, c)
		p = c
	}
}

package workqueue

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/clock"

	"github.com/minikubelet/minikubelet"
)

// Options configures a Queue.
type Options struct {
	// Clock gives the current time. Required.
	Clock clock.PassiveClock
}

// validate reports the missing required options, wrapping ErrMissingOption.
func (o Options) validate() error {
	if o.Clock == nil {
		return fmt.Errorf("options Clock: %w", minikubelet.ErrMissingOption)
	}
	return nil
}

// Queue is a set of pod UIDs, each with the instant it becomes due. It is a core: it is driven by
// one goroutine and is not safe for concurrent use.
type Queue struct {
	clock clock.PassiveClock
	queue map[types.UID]time.Time
	// byDue is a binary heap, earliest first, of every due time Enqueue gave and GetWork has not
	// reached yet. An entry stands for its UID only while the UID's due time in queue is still the
	// entry's: a later Enqueue of the UID leaves the old entry behind, and GetWork drops it when it
	// comes up. The sync loop asks for work every second and nearly always finds none, or a pod
	// or two: GetWork looks at the due entries only, not at every queued UID.
	byDue []dueEntry
}

// dueEntry is one due time Enqueue gave a UID.
type dueEntry struct {
	due time.Time
	uid types.UID
}

// New returns an empty Queue that reads the time from opts.Clock. A missing required option is an
// error wrapping ErrMissingOption.
func New(opts Options) (*Queue, error) {
	if err := opts.validate(); err != nil {
		return nil, fmt.Errorf("new work queue: %w", err)
	}
	return &Queue{clock: opts.Clock, queue: map[types.UID]time.Time{}}, nil
}

// Enqueue makes uid due delay from now. A later call for the same UID wins, even when it makes
// the UID due later than before: the kubelet's queue keeps one due time per UID.
func (q *Queue) Enqueue(uid types.UID, delay time.Duration) {
	due := q.clock.Now().Add(delay)
	q.queue[uid] = due
	q.push(dueEntry{due: due, uid: uid})
}

// GetWork removes and returns every UID due strictly before now, sorted.
func (q *Queue) GetWork() []types.UID {
	now := q.clock.Now()
	var items []types.UID
	for len(q.byDue) > 0 && q.byDue[0].due.Before(now) {
		e := q.pop()
		// The UID's own due time, not one a later Enqueue replaced; a UID taken already (two
		// entries with the same due time) is no longer queued.
		if due, ok := q.queue[e.uid]; ok && due.Equal(e.due) {
			items = append(items, e.uid)
			delete(q.queue, e.uid)
		}
	}
	slices.Sort(items)
	return items
}

// push adds e to the heap.
func (q *Queue) push(e dueEntry) {
	h := append(q.byDue, e)
	for i := len(h) - 1; i > 0; {
		parent := (i - 1) / 2
		if !h[i].due.Before(h[parent].due) {
			break
		}
		h[i], h[parent] = h[parent], h[i]
		i = parent
	}
	q.byDue = h
}

// pop removes and returns the heap's earliest entry.
func (q *Queue) pop() dueEntry {
	h := q.byDue
	top := h[0]
	last := len(h) - 1
	h[0] = h[last]
	h[last] = dueEntry{}
	h = h[:last]
	for i := 0; ; {
		least, l, r := i, 2*i+1, 2*i+2
		if l < len(h) && h[l].due.Before(h[least].due) {
			least = l
		}
		if r < len(h) && h[r].due.Before(h[least].due) {
			least = r
		}
		if least == i {
			break
		}
		h[i], h[least] = h[least], h[i]
		i = least
	}
	q.byDue = h
	return top
}

// Len returns how many UIDs are queued, due or not.
func (q *Queue) Len() int {
	return len(q.queue)
}

// NextDue returns the earliest due time in the queue and false if the queue is empty. The sync
// loop polls the queue on its own ticker, as the kubelet does; NextDue is for tools and tests.
func (q *Queue) NextDue() (time.Time, bool) {
	var earliest time.Time
	found := false
	for _, due := range q.queue {
		if !found || due.Before(earliest) {
			earliest, found = due, true
		}
	}
	return earliest, found
}

// Entry is one UID in the queue and the instant it becomes due.
type Entry struct {
	UID types.UID
	Due time.Time
}

// Entries returns every queued UID with its due time, the earliest first (ties by UID), without
// taking any: a view of the queue for readers that teach or inspect it.
func (q *Queue) Entries() []Entry {
	out := make([]Entry, 0, len(q.queue))
	for uid, due := range q.queue {
		out = append(out, Entry{UID: uid, Due: due})
	}
	slices.SortFunc(out, func(a, b Entry) int {
		if c := a.Due.Compare(b.Due); c != 0 {
			return c
		}
		return strings.Compare(string(a.UID), string(b.UID))
	})
	return out
}

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
	// earliest is at or before every due time in the queue (a bound, not always one of them: a
	// later Enqueue may move a UID's due time on). The sync loop asks for work every second and
	// nearly always finds none: GetWork answers that from the bound, without walking the queue.
	earliest time.Time
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
	if len(q.queue) == 0 || due.Before(q.earliest) {
		q.earliest = due
	}
	q.queue[uid] = due
}

// GetWork removes and returns every UID due strictly before now, sorted.
func (q *Queue) GetWork() []types.UID {
	now := q.clock.Now()
	if len(q.queue) == 0 || !q.earliest.Before(now) {
		return nil // nothing is due before the bound
	}
	var items []types.UID
	first := true
	for uid, due := range q.queue {
		if due.Before(now) {
			items = append(items, uid)
			delete(q.queue, uid)
			continue
		}
		if first || due.Before(q.earliest) {
			q.earliest, first = due, false
		}
	}
	slices.Sort(items)
	return items
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

package workqueue

import (
	"slices"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/clock"
)

// Queue is a set of pod UIDs, each with the instant it becomes due. It is safe for concurrent use.
type Queue struct {
	clock clock.PassiveClock

	mu    sync.Mutex // guards queue
	queue map[types.UID]time.Time
}

// New returns an empty Queue that reads the time from clk.
func New(clk clock.PassiveClock) *Queue {
	if clk == nil {
		panic("workqueue.New: nil clock")
	}
	return &Queue{clock: clk, queue: map[types.UID]time.Time{}}
}

// Enqueue makes uid due delay from now. A later call for the same UID wins, even when it makes
// the UID due later than before: the kubelet's queue keeps one due time per UID.
func (q *Queue) Enqueue(uid types.UID, delay time.Duration) {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.queue[uid] = q.clock.Now().Add(delay)
}

// GetWork removes and returns every UID due strictly before now, sorted.
func (q *Queue) GetWork() []types.UID {
	q.mu.Lock()
	defer q.mu.Unlock()
	now := q.clock.Now()
	var items []types.UID
	for uid, due := range q.queue {
		if due.Before(now) {
			items = append(items, uid)
			delete(q.queue, uid)
		}
	}
	slices.Sort(items)
	return items
}

// Len returns how many UIDs are queued, due or not.
func (q *Queue) Len() int {
	q.mu.Lock()
	defer q.mu.Unlock()
	return len(q.queue)
}

// NextDue returns the earliest due time in the queue and false if the queue is empty. The sync
// loop polls the queue on its own ticker, as the kubelet does; NextDue is for tools and tests.
func (q *Queue) NextDue() (time.Time, bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	var earliest time.Time
	found := false
	for _, due := range q.queue {
		if !found || due.Before(earliest) {
			earliest, found = due, true
		}
	}
	return earliest, found
}

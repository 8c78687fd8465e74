package fakeruntime

import (
	"container/heap"
	"time"

	"k8s.io/apimachinery/pkg/types"
)

// transition is one scheduled effect. Effects at the same instant apply in the order they were
// scheduled.
type transition struct {
	at        time.Time
	seq       uint64
	apply     func(at time.Time)
	cancelled bool
	index     int
	// guarded effects were scheduled by a SyncPod (podSync.schedule): apply runs only if the
	// pod's generation is still gen, so a kill in between cancels them. The guard lives here
	// rather than in a closure around apply: one allocation less for every step of a start.
	guarded bool
	uid     types.UID
	gen     int
}

// transitions is a min-heap of transitions by (at, seq).
type transitions []*transition

func (h transitions) Len() int { return len(h) }
func (h transitions) Less(i, j int) bool {
	if !h[i].at.Equal(h[j].at) {
		return h[i].at.Before(h[j].at)
	}
	return h[i].seq < h[j].seq
}
func (h transitions) Swap(i, j int) {
	h[i], h[j] = h[j], h[i]
	h[i].index = i
	h[j].index = j
}
func (h *transitions) Push(x any) {
	t := x.(*transition)
	t.index = len(*h)
	*h = append(*h, t)
}
func (h *transitions) Pop() any {
	old := *h
	n := len(old)
	t := old[n-1]
	old[n-1] = nil
	*h = old[:n-1]
	return t
}

// scheduleAt records fn to run when the clock reaches at.
func (r *Runtime) scheduleAt(at time.Time, fn func(at time.Time)) *transition {
	r.seq++
	t := &transition{at: at, seq: r.seq, apply: fn}
	heap.Push(&r.schedule, t)
	return t
}

// applyDue runs every effect due at or before now. An effect may schedule more; those run too
// when they are due.
func (r *Runtime) applyDue(now time.Time) {
	for len(r.schedule) > 0 && !r.schedule[0].at.After(now) {
		t := heap.Pop(&r.schedule).(*transition)
		if !t.cancelled {
			if !t.guarded || r.generation[t.uid] == t.gen {
				t.apply(t.at)
			}
			// Most effects change a record (a sandbox, a container's state); the few that only
			// trace cost a listing.
			r.changed()
		}
	}
}

// cancel drops a pending effect.
func cancel(t *transition) {
	if t != nil {
		t.cancelled = true
	}
}

package fakeruntime

import (
	"time"

	"k8s.io/apimachinery/pkg/types"
)

// step is one scheduled effect. Effects at the same instant apply in the order they were
// scheduled. The schedule keeps steps by value: a pod's start schedules half a dozen, and one
// allocation each for a heap node was a twentieth of what a pod cost on its way to Running.
type step struct {
	at    time.Time
	seq   uint64
	apply func(at time.Time)
	// held is the handle of a step someone may cancel (scheduleAt), nil for the rest (post).
	held *transition
	// guarded steps were scheduled by a SyncPod (podSync.schedule): apply runs only if the
	// pod's generation is still gen, so a kill in between cancels them. The guard lives here
	// rather than in a closure around apply: one allocation less for every step of a start.
	guarded bool
	// ofProcess steps are the kubelet process's own doing: the CRI calls its SyncPod makes later
	// and the events and log lines it records then. A restarted kubelet drops them
	// (dropOfProcess); guarded steps are all of the process.
	ofProcess bool
	uid       types.UID
	gen       int
}

// cancelled reports whether the step's holder cancelled it.
func (s *step) cancelled() bool { return s.held != nil && s.held.cancelled }

// transition is the handle of a step that may be cancelled: a container's pending exit.
type transition struct {
	at        time.Time
	cancelled bool
}

// transitions is a min-heap of steps by (at, seq). seq is unique, so the order in which steps
// come out is the one total order whatever the heap's shape.
type transitions []step

func (h transitions) less(i, j int) bool {
	if !h[i].at.Equal(h[j].at) {
		return h[i].at.Before(h[j].at)
	}
	return h[i].seq < h[j].seq
}

func (h *transitions) push(s step) {
	*h = append(*h, s)
	q := *h
	for i := len(q) - 1; i > 0; {
		parent := (i - 1) / 2
		if !q.less(i, parent) {
			break
		}
		q[i], q[parent] = q[parent], q[i]
		i = parent
	}
}

// pop removes and returns the first step.
func (h *transitions) pop() step {
	q := *h
	n := len(q) - 1
	q[0], q[n] = q[n], q[0]
	for i := 0; ; {
		first := i
		if l := 2*i + 1; l < n && q.less(l, first) {
			first = l
		}
		if r := 2*i + 2; r < n && q.less(r, first) {
			first = r
		}
		if first == i {
			break
		}
		q[i], q[first] = q[first], q[i]
		i = first
	}
	s := q[n]
	q[n] = step{} // drop the closure and the handle
	*h = q[:n]
	return s
}

// scheduleAt records fn to run when the clock reaches at, and returns the handle that cancels it.
func (r *Runtime) scheduleAt(at time.Time, fn func(at time.Time)) *transition {
	t := &transition{at: at}
	r.seq++
	r.schedule.push(step{at: at, seq: r.seq, apply: fn, held: t})
	return t
}

// post records fn to run when the clock reaches at, for good: nothing cancels it.
func (r *Runtime) post(at time.Time, fn func(at time.Time)) {
	r.seq++
	r.schedule.push(step{at: at, seq: r.seq, apply: fn})
}

// postGuarded is post for a step of a SyncPod of the pod with uid: it runs only if the pod's
// generation is still gen then, and the kubelet process that scheduled it still runs.
func (r *Runtime) postGuarded(at time.Time, fn func(at time.Time), uid types.UID, gen int) {
	r.seq++
	r.schedule.push(step{at: at, seq: r.seq, apply: fn, guarded: true, ofProcess: true, uid: uid, gen: gen})
}

// postOfProcess is post for a step the kubelet process itself takes later (the event its SyncPod
// records when a pull ends): it runs only if that process still runs then.
func (r *Runtime) postOfProcess(at time.Time, fn func(at time.Time)) {
	r.seq++
	r.schedule.push(step{at: at, seq: r.seq, apply: fn, ofProcess: true})
}

// dropOfProcess removes the steps of the kubelet process (ofProcess) from the schedule: the
// process ended, and what it would have done later dies with it. The rest keep their (at, seq)
// order, which is total, so rebuilding the heap changes nothing of when they run.
func (h *transitions) dropOfProcess() {
	var kept []step
	for _, s := range *h {
		if !s.ofProcess {
			kept = append(kept, s)
		}
	}
	clear(*h)
	*h = (*h)[:0]
	for _, s := range kept {
		h.push(s)
	}
}

// applyDue runs every effect due at or before now. An effect may schedule more; those run too
// when they are due.
func (r *Runtime) applyDue(now time.Time) {
	for len(r.schedule) > 0 && !r.schedule[0].at.After(now) {
		t := r.schedule.pop()
		if !t.cancelled() {
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

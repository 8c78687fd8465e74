package fakeruntime

import (
	"time"

	v1 "k8s.io/api/core/v1"

	"github.com/minikubelet/minikubelet/sim/trace"
)

// step is one scheduled effect. Effects at the same instant apply in the order they were
// scheduled. The schedule keeps steps by value: a pod's start schedules half a dozen, and one
// allocation each for a heap node was a twentieth of what a pod cost on its way to Running.
type step struct {
	at  time.Time
	seq uint64
	// kind says what the step does: apply (stepFunc), or one of the steps every container's
	// start takes, which carry their data in pod, key, rec and event instead of a closure that
	// would capture it (one allocation a step; see stepKind).
	kind  stepKind
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
	gen       int
	// pod is the pod of a guarded step (its UID is the guard's) and of a typed step; key is its
	// trace key, rec the container of stepCreated and stepStarted, event what stepEvent traces
	// and records.
	pod   *v1.Pod
	key   string
	rec   *containerRec
	event *pendingEvent
}

// stepKind is what a step does. A pod's way to Running takes each typed step once a container
// (and the Pulled event once an image), so they are data rather than closures.
type stepKind uint8

const (
	// stepFunc runs apply.
	stepFunc stepKind = iota
	// stepCreated is CreateContainer returning: rec joins its pod's record, Created is traced
	// and recorded (Runtime.containerCreated).
	stepCreated
	// stepStarted is StartContainer returning for a container without a scripted behavior in
	// its pod's annotations (Runtime.containerStarted).
	stepStarted
	// stepEvent is the process tracing event.trace and recording event.k about pod
	// (Runtime.emitAndRecord).
	stepEvent
)

// pendingEvent is what a stepEvent traces and records: one allocation, where a closure over
// them took two (the closure, and the trace event it captured), and none once an earlier one
// was freed (Runtime.pendingEvent).
type pendingEvent struct {
	trace trace.Event
	k     kubeEvent
}

// run applies the step.
func (r *Runtime) run(t *step) {
	switch t.kind {
	case stepFunc:
		t.apply(t.at)
	case stepCreated:
		r.containerCreated(t.at, t.pod, t.key, t.rec)
	case stepStarted:
		r.containerStarted(t.at, t.pod, t.key, t.rec, Behavior{}, false)
	case stepEvent:
		r.emitAndRecord(t.pod, t.event.trace, t.event.k)
		// Traced and recorded by value: the pending event is free for the next one.
		*t.event = pendingEvent{}
		r.spareEvents = append(r.spareEvents, t.event)
		t.event = nil
	}
}

// pendingEvent returns a pending event of e and k, one freed by an earlier stepEvent when there
// is one: a pod's start schedules one (Pulled), which runs at the runtime's next call, so a few
// serve every pod of a node.
func (r *Runtime) pendingEvent(e trace.Event, k kubeEvent) *pendingEvent {
	var p *pendingEvent
	if n := len(r.spareEvents); n > 0 {
		p = r.spareEvents[n-1]
		r.spareEvents[n-1] = nil
		r.spareEvents = r.spareEvents[:n-1]
	} else {
		p = new(pendingEvent)
	}
	p.trace, p.k = e, k
	return p
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

// postGuarded is post for a step of a SyncPod of pod: it runs only if the pod's generation is
// still what it is now then, and the kubelet process that scheduled it still runs. t says what
// it does (its at, seq and guard are set here).
func (r *Runtime) postGuarded(at time.Time, pod *v1.Pod, t step) {
	r.seq++
	t.at, t.seq, t.guarded, t.ofProcess, t.pod, t.gen = at, r.seq, true, true, pod, r.generation[pod.UID]
	r.schedule.push(t)
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
			if !t.guarded || r.generation[t.pod.UID] == t.gen {
				r.run(&t)
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

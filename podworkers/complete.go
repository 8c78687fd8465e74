package podworkers

import (
	"context"
	"errors"
	"slices"
	"strings"
	"time"

	"github.com/minikubelet/minikubelet/kubecontainer"
	"github.com/minikubelet/minikubelet/sim/trace"
)

// complete ends the iteration of a sync whose blocking work is over.
func (w *Workers) complete(s *podStatus, callbacks *[]func()) {
	wk := s.work
	s.lastSyncTime = w.clock.Now()
	w.finishWork(s, &wk.result, wk.err, callbacks)
}

// finishWork is the end of the kubelet's podWorkerLoop iteration: on success it moves the pod to
// its next phase, then it requeues the UID (completeWork).
func (w *Workers) finishWork(s *podStatus, res *Result, err error, callbacks *[]func()) {
	wk := s.work
	s.work = nil
	w.observe(wk)
	phaseTransition := false
	switch {
	case err != nil:
		e := trace.Event{Event: trace.KindError, Message: err.Error(), Func: syncFunc(wk)}
		var se *statusError
		switch {
		case errors.As(err, &se):
			e.Reason = "FailedSync"
		case errors.Is(err, context.Canceled):
			e.Reason = "Canceled"
		}
		w.emit(s, e)
	case wk.state == Terminated:
		w.completeTerminated(s)
		return
	case wk.state == Terminating && wk.opts.RunningPod != nil:
		w.completeTerminatingRuntimePod(s)
		return
	case wk.state == Terminating:
		w.completeTerminating(s, callbacks)
		phaseTransition = true
	case res != nil && res.IsTerminal:
		w.completeSync(s)
		phaseTransition = true
	}
	w.completeWork(s, phaseTransition, err)
}

// completeSync: SyncPod found the pod terminal, so the worker moves to terminating on its own.
func (w *Workers) completeSync(s *podStatus) {
	if s.state == Sync {
		if err := w.transition(s, Terminating, "completeSync"); err != nil {
			return
		}
		s.times.terminating = w.clock.Now()
	}
	s.flags.startedTerminating = true
	w.requeueLastPodUpdate(s)
}

// completeTerminating: no container runs any more; the kill requests are answered.
func (w *Workers) completeTerminating(s *podStatus, callbacks *[]func()) {
	if err := w.transition(s, Terminated, "completeTerminating"); err != nil {
		return
	}
	s.times.terminated = w.clock.Now()
	*callbacks = append(*callbacks, s.onTerminated...)
	s.onTerminated, s.statusFns = nil, nil
	w.requeueLastPodUpdate(s)
}

// completeTerminatingRuntimePod: a runtime-only pod is stopped; it leaves no history.
func (w *Workers) completeTerminatingRuntimePod(s *podStatus) {
	if err := w.transition(s, Finished, "completeTerminatingRuntimePod"); err != nil {
		return
	}
	s.times.terminated = w.clock.Now()
	w.releaseStatic(s)
	w.forget(s, "completeTerminatingRuntimePod")
}

// completeTerminated: the pod is finished and takes no more updates.
func (w *Workers) completeTerminated(s *podStatus) {
	if err := w.transition(s, Finished, "completeTerminated"); err != nil {
		return
	}
	w.releaseStatic(s)
}

// forget deletes the worker's history.
func (w *Workers) forget(s *podStatus, fn string) {
	if err := w.transition(s, stateNone, fn); err != nil {
		return
	}
	delete(w.pods, s.uid)
	s.flags.forgotten = true
	// A waiting list may still hold a UID nobody will start (the kubelet keeps it too, until
	// another pod of the full name asks to start); when its array is this worker's slot, it
	// gets an array of its own so that the list does not keep the whole worker reachable.
	if l := w.waitingStatic[s.fullname]; len(l) > 0 && &l[0] == &s.waitingSlot[0] {
		w.waitingStatic[s.fullname] = slices.Clone(l)
	}
}

// requeueLastPodUpdate replays the last processed update if nothing is pending, which is how a
// worker walks from sync to terminating to terminated with no outside event.
func (w *Workers) requeueLastPodUpdate(s *podStatus) {
	if s.pending != nil || s.active == nil {
		return
	}
	s.setPending(*s.active)
	s.pendingSeq = w.nextSeq()
	s.flags.signalled = true
	w.wake(s)
}

// completeWork is the kubelet's completeWork (v1.35): queue the UID again, at once after a phase
// transition, after the resync interval after success, soon after "network is not ready", and
// otherwise when the earliest back-off carried by the error expires (clamped to [0, resync]) or
// after the back-off period. A pending update wakes the worker at once.
func (w *Workers) completeWork(s *podStatus, phaseTransition bool, err error) {
	var delay time.Duration
	switch {
	case phaseTransition:
	case err == nil:
		delay = w.jitter(w.resyncInterval)
	case strings.Contains(err.Error(), networkNotReadyErrorMsg):
		delay = w.jitter(backOffOnTransientErrorPeriod)
	default:
		backoff := w.backOffPeriod
		if expiry, ok := kubecontainer.MinBackoffExpiration(err); ok {
			backoff = expiry.Sub(w.clock.Now())
		}
		backoff = min(max(backoff, 0), w.resyncInterval)
		delay = w.jitter(backoff)
	}
	w.queue.Enqueue(s.uid, delay)
	w.emit(s, trace.Event{Event: trace.KindRequeue, Delay: delay, Func: "completeWork"})
	if s.pending != nil {
		s.flags.signalled = true
	}
	w.wake(s)
}

// statusError is a failure to read the pod's status from the cache, which the kubelet reports as
// a FailedSync event before it retries.
type statusError struct{ err error }

func (e *statusError) Error() string { return "error determining status: " + e.err.Error() }
func (e *statusError) Unwrap() error { return e.err }

// workOp is the trace's Op for a sync: the update type, or the phase for the terminal phases.
func workOp(wk *work) string {
	switch wk.state {
	case Terminating:
		return "terminating"
	case Terminated:
		return "terminated"
	}
	return wk.opts.UpdateType.String()
}

// syncFunc names the kubelet sync function that runs the work.
func syncFunc(wk *work) string {
	switch {
	case wk.state == Terminated:
		return "SyncTerminatedPod"
	case wk.state == Terminating && wk.opts.RunningPod != nil:
		return "SyncTerminatingRuntimePod"
	case wk.state == Terminating:
		return "SyncTerminatingPod"
	}
	return "SyncPod"
}

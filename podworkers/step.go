package podworkers

import (
	"context"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/minikubelet/minikubelet/kubecontainer"
	"github.com/minikubelet/minikubelet/sim/trace"
)

// Step does everything that is due at the clock's current time, the work the kubelet's worker
// goroutines would do: it completes every sync whose blocking work has ended (in the order they
// end), then lets each worker with a wake-up take its pending update and, once the cache is newer
// than its last sync, run the sync function, in the order the updates arrived. It repeats until
// nothing more can happen at this instant. Call it after UpdatePod, after each PLEG relist (which
// makes waiting workers ready) and at NextWake.
//
// A worker whose taken update waits for the cache is asked once per Step: the cache only gets
// newer at a relist, between Steps. Step's cost is proportional to the work due, not to the number
// of workers.
func (w *Workers) Step(ctx context.Context) {
	w.retryWaiting()
	for {
		// The OnTerminated callbacks run after advance and after finishCall, not where they are
		// collected. This is for order, not for locking: it keeps the callbacks' order relative to
		// the trace, and a callback that calls back into the Workers never sees a half-done step.
		var callbacks []func()
		// The call is filled in place, on the stack: one allocation less for every sync.
		var c call
		ready, progressed := w.advance(&c, &callbacks)
		for _, fn := range callbacks {
			fn()
		}
		if !ready {
			if !progressed {
				return
			}
			continue
		}
		res, err := w.invoke(ctx, &c)
		callbacks = nil // advance's callbacks have run; each runs once
		w.finishCall(&c, res, err, &callbacks)
		for _, fn := range callbacks {
			fn()
		}
	}
}

// Resume ends the blocked wait (Result.Blocked) of the worker for uid: its Wait is called at the
// next Step, which NextWake then reports as due. A worker that is not blocked is left as it is:
// its wait was already called again (a cancel), it ended, or the worker was forgotten meanwhile.
func (w *Workers) Resume(uid types.UID) {
	s, ok := w.pods[uid]
	if !ok {
		return
	}
	wk := s.work
	if wk == nil || !wk.called || !wk.result.Blocked || wk.result.Wait == nil || !wk.done.IsZero() {
		return
	}
	wk.done = w.clock.Now()
	w.pushBusy(s, wk)
}

// NextWake returns when the workers next have work of their own: the earliest instant a busy sync
// ends, or now if a worker has a wake-up it has not picked up yet. Workers waiting for the cache are
// not reported: a PLEG relist wakes them.
func (w *Workers) NextWake() (time.Time, bool) {
	now := w.clock.Now()
	e, found := w.peekBusy()
	next := e.done
	if w.hasWake() && (!found || now.Before(next)) {
		next, found = now, true
	}
	return next, found
}

// call is one sync function invocation, prepared by advance and run by invoke.
type call struct {
	s       *podStatus
	wk      *work
	pod     *v1.Pod
	status  *kubecontainer.PodStatus
	grace   *int64
	podFunc func(*v1.PodStatus)
	// resume is a waiting sync looking again (Result.Wait), not a new call.
	resume bool
}

// advance does every piece of due work that does not call the Syncer, and fills c with the next
// sync to run, if any (ready). progressed reports whether anything changed.
//
// It first completes the syncs that ended, by (Done, arrival). Then one pass visits, in arrival
// order, the workers that had a wake-up or a taken update when the pass began; a worker that
// becomes due during the pass (its iteration ended without a call and a newer update is pending)
// waits for the next pass. The pass stops at the first sync to run.
func (w *Workers) advance(c *call, callbacks *[]func()) (ready, progressed bool) {
	now := w.clock.Now()
	for {
		e, ok := w.peekBusy()
		if !ok || e.done.After(now) {
			break
		}
		w.busy.pop()
		if e.wk.result.Wait != nil {
			// The sync looks again: a call like the first, which carries it on.
			*c = call{s: e.s, wk: e.wk, resume: true}
			return true, true
		}
		w.complete(e.s, callbacks)
		progressed = true
	}
	w.inPass = true
	defer w.endPass()
	for {
		s, ok := w.popWake()
		if !ok {
			return false, progressed
		}
		if s.work == nil {
			w.startPodSync(s, now)
			progressed = true
			if s.work == nil {
				continue
			}
		}
		ready, done := w.prepare(c, s, now, callbacks)
		switch {
		case ready:
			return true, true
		case done:
			progressed = true
		default:
			w.waiting = append(w.waiting, s)
		}
	}
}

// prepare readies the taken update's sync once the cache allows it: it fills c with the call to
// make (ready), or reports done when the iteration ended without a call (a cache error).
func (w *Workers) prepare(c *call, s *podStatus, now time.Time, callbacks *[]func()) (ready, done bool) {
	wk := s.work
	var status *kubecontainer.PodStatus
	if wk.opts.RunningPod == nil {
		cached, err, ok := w.cache.GetNewerThan(s.uid, s.lastSyncTime)
		if !ok {
			return false, false
		}
		if err != nil {
			// The kubelet records a FailedSync event and retries after back-off; the last sync
			// time does not move.
			wk.called, wk.done = true, now
			w.finishWork(s, nil, &statusError{err: err}, callbacks)
			return false, true
		}
		status = cached
	}
	*c = call{s: s, wk: wk, pod: wk.opts.Pod, status: status}
	if wk.state == Terminating {
		if k := wk.opts.KillPodOptions; k != nil {
			c.grace = copyInt64(k.PodTerminationGracePeriodSecondsOverride)
		}
		c.podFunc = w.acknowledgeTerminating(s)
	}
	wk.called = true
	w.emit(s, trace.Event{Event: trace.KindSync, Op: workOp(wk), Func: syncFunc(wk)})
	return true, false
}

// invoke runs the sync function for c. The Syncer may call back into the Workers.
func (w *Workers) invoke(ctx context.Context, c *call) (Result, error) {
	opts := c.wk.opts
	switch {
	case c.resume:
		return c.wk.result.Wait(ctx, c.wk.canceled)
	case c.wk.state == Terminated:
		return w.syncer.SyncTerminatedPod(ctx, c.pod, c.status)
	case c.wk.state == Terminating && opts.RunningPod != nil:
		return w.syncer.SyncTerminatingRuntimePod(ctx, opts.RunningPod)
	case c.wk.state == Terminating:
		return w.syncer.SyncTerminatingPod(ctx, c.pod, c.status, c.grace, c.podFunc)
	default:
		return w.syncer.SyncPod(ctx, opts.UpdateType, c.pod, opts.MirrorPod, c.status)
	}
}

// finishCall records what the sync function returned, and completes the iteration now if its work
// has already ended.
func (w *Workers) finishCall(c *call, res Result, err error, callbacks *[]func()) {
	s := c.s
	if s.flags.forgotten || s.work != c.wk {
		return // the worker was forgotten while the sync ran
	}
	now := w.clock.Now()
	wk := c.wk
	wk.result, wk.err = res, err
	if res.Blocked && res.Wait != nil && err == nil {
		// No instant ends the wait: Resume indexes the sync once its call has returned.
		wk.done = time.Time{}
		return
	}
	wk.done = res.Done
	if wk.done.IsZero() || wk.done.Before(now) {
		wk.done = now
	}
	if !wk.done.After(now) {
		w.complete(s, callbacks)
		return
	}
	w.pushBusy(s, wk)
}

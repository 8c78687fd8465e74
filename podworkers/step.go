package podworkers

import (
	"context"
	"sort"
	"time"

	v1 "k8s.io/api/core/v1"

	"github.com/minikubelet/minikubelet/kubecontainer"
	"github.com/minikubelet/minikubelet/trace"
)

// Step does everything that is due at the clock's current time, the work the kubelet's worker
// goroutines would do: it completes every sync whose blocking work has ended (in the order they
// end), then lets each worker with a wake-up take its pending update and, once the cache is newer
// than its last sync, run the sync function, in the order the updates arrived. It repeats until
// nothing more can happen at this instant. Call it after UpdatePod, after each PLEG relist (which
// makes waiting workers ready) and at NextWake.
func (w *Workers) Step(ctx context.Context) {
	for {
		var callbacks []func()
		w.mu.Lock()
		c, progressed := w.advance(&callbacks)
		w.mu.Unlock()
		runCallbacks(callbacks)
		if c == nil {
			if !progressed {
				return
			}
			continue
		}
		res, err := w.invoke(ctx, c)
		w.mu.Lock()
		w.finishCall(c, res, err, &callbacks)
		w.mu.Unlock()
		runCallbacks(callbacks)
	}
}

// NextWake returns when the workers next have work of their own: the earliest instant a busy sync
// ends, or now if a worker has a wake-up it has not picked up yet. Workers waiting for the cache are
// not reported: a PLEG relist wakes them.
func (w *Workers) NextWake() (time.Time, bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	now := w.clock.Now()
	var next time.Time
	found := false
	for _, s := range w.pods {
		var t time.Time
		switch {
		case s.work != nil && s.work.called && !s.work.done.IsZero():
			t = s.work.done
		case s.work == nil && s.flags.signalled && s.state != Finished && !w.held[s.uid]:
			t = now
		default:
			continue
		}
		if !found || t.Before(next) {
			next, found = t, true
		}
	}
	return next, found
}

// call is one sync function invocation, prepared under the lock and run without it.
type call struct {
	s       *podStatus
	wk      *work
	pod     *v1.Pod
	status  *kubecontainer.PodStatus
	grace   *int64
	podFunc func(*v1.PodStatus)
}

// advance does every piece of due work that does not call the Syncer, and returns the next sync to
// run, if any. progressed reports whether anything changed.
func (w *Workers) advance(callbacks *[]func()) (c *call, progressed bool) {
	now := w.clock.Now()
	for _, s := range w.due(now) {
		w.complete(s, callbacks)
		progressed = true
	}
	for _, s := range w.candidates() {
		if s.work == nil {
			w.startPodSync(s, now)
			progressed = true
			if s.work == nil {
				continue
			}
		}
		if c, done := w.prepare(s, now, callbacks); c != nil {
			return c, true
		} else if done {
			progressed = true
		}
	}
	return nil, progressed
}

// due returns the workers whose sync has ended at now, ordered by end time and then arrival.
func (w *Workers) due(now time.Time) []*podStatus {
	var out []*podStatus
	for _, s := range w.pods {
		if wk := s.work; wk != nil && wk.called && !wk.done.IsZero() && !wk.done.After(now) {
			out = append(out, s)
		}
	}
	sort.Slice(out, func(i, j int) bool {
		a, b := out[i].work, out[j].work
		if !a.done.Equal(b.done) {
			return a.done.Before(b.done)
		}
		return a.seq < b.seq
	})
	return out
}

// candidates returns, in arrival order, the workers that have a wake-up to pick up or a taken
// update waiting for the cache.
func (w *Workers) candidates() []*podStatus {
	var out []*podStatus
	seqOf := map[*podStatus]uint64{}
	for _, s := range w.pods {
		switch {
		case s.state == Finished || w.held[s.uid]:
		case s.work == nil && s.flags.signalled:
			out = append(out, s)
			seqOf[s] = s.pendingSeq
		case s.work != nil && !s.work.called:
			out = append(out, s)
			seqOf[s] = s.work.seq
		}
	}
	sort.Slice(out, func(i, j int) bool { return seqOf[out[i]] < seqOf[out[j]] })
	return out
}

// prepare readies the taken update's sync once the cache allows it. It returns the call to make,
// or done = true when the iteration ended without a call (a cache error or a cancelled context).
func (w *Workers) prepare(s *podStatus, now time.Time, callbacks *[]func()) (c *call, done bool) {
	wk := s.work
	var status *kubecontainer.PodStatus
	if wk.opts.RunningPod == nil {
		cached, err, ok := w.cache.GetNewerThan(s.uid, s.lastSyncTime)
		if !ok {
			return nil, false
		}
		if err != nil {
			// The kubelet records a FailedSync event and retries after back-off; the last sync
			// time does not move.
			wk.called, wk.done = true, now
			w.finishWork(s, nil, &statusError{err: err}, callbacks)
			return nil, true
		}
		status = cached
	}
	if wk.canceled {
		// The context was cancelled while the worker waited for the cache: the sync would see it
		// cancelled at once. The kubelet acknowledges the termination before that call.
		if wk.state == Terminating {
			w.acknowledgeTerminating(s)
		}
		wk.called, wk.done = true, now
		s.lastSyncTime = now
		w.finishWork(s, nil, context.Canceled, callbacks)
		return nil, true
	}
	c = &call{s: s, wk: wk, pod: wk.opts.Pod, status: status}
	if wk.state == Terminating {
		if k := wk.opts.KillPodOptions; k != nil {
			c.grace = copyInt64(k.PodTerminationGracePeriodSecondsOverride)
		}
		c.podFunc = w.acknowledgeTerminating(s)
	}
	wk.called = true
	w.emit(s, trace.Event{Event: "sync", Op: workOp(wk), Func: syncFunc(wk)})
	return c, false
}

// invoke runs the sync function for c, without the lock.
func (w *Workers) invoke(ctx context.Context, c *call) (Result, error) {
	opts := c.wk.opts
	switch {
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
	if w.pods[s.uid] != s || s.work != c.wk {
		return // the worker was forgotten while the sync ran
	}
	now := w.clock.Now()
	wk := c.wk
	wk.result, wk.err = res, err
	wk.done = res.Done
	if wk.done.IsZero() || wk.done.Before(now) || wk.canceled {
		wk.done = now
	}
	if !wk.done.After(now) {
		w.complete(s, callbacks)
	}
}

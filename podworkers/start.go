package podworkers

import (
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/minikubelet/minikubelet/kubecontainer"
	"github.com/minikubelet/minikubelet/sim/trace"
)

// startPodSync is the kubelet's startPodSync: consume the wake-up, take the pending update, and
// decide whether the pod may start. A static pod waiting for its full name keeps its update pending
// until a later wake-up; a pod terminated before it could start finishes without any sync.
func (w *Workers) startPodSync(s *podStatus, now time.Time) {
	s.flags.signalled = false
	if s.pending == nil {
		return
	}
	hadConfig, wasStatic := s.config()
	defer w.configChanged(s, hadConfig, wasStatic)
	wk := &work{state: s.workType(), opts: *s.pending, seq: s.pendingSeq, taken: now}
	pending, pendingSeq := s.pending, s.pendingSeq
	s.pending = nil

	switch {
	case s.isStarted(),
		wk.opts.RunningPod != nil && wk.state == Terminating: // an orphan starts only to be killed
		s.mergeLastUpdate(wk.opts)
	case wk.opts.Pod == nil:
		// Unreachable: a runtime-only update always makes the worker terminating. The kubelet's
		// worker stops here; so does this one.
		s.mergeLastUpdate(wk.opts)
		return
	default:
		canStart, canEverStart := w.allowPodStart(s, wk.opts.Pod)
		switch {
		case !canEverStart:
			w.cleanupUnstartedPod(s, now)
			return
		case !canStart:
			s.pending, s.pendingSeq = pending, pendingSeq
			return
		}
		s.times.started = now
		s.mergeLastUpdate(wk.opts)
	}
	s.work = wk
}

// allowPodStart is the kubelet's allowPodStart: only static pods wait, one at a time per full
// name, and a blocked one is queued to retry after jitter(backOffPeriod). s is the pod's worker;
// without one the pod can never start.
func (w *Workers) allowPodStart(s *podStatus, pod *v1.Pod) (canStart, canEverStart bool) {
	if !kubecontainer.IsStaticPod(pod) {
		return true, true
	}
	if s == nil || s.isTerminationRequested() {
		return false, false
	}
	if !w.allowStaticPodStart(s.fullname, s.uid) {
		delay := w.jitter(w.backOffPeriod)
		w.queue.Enqueue(s.uid, delay)
		w.emit(s, trace.Event{Event: trace.KindBlocked, Reason: "StaticPodExclusion", Delay: delay, Func: "allowPodStart"})
		return false, true
	}
	return true, true
}

// allowStaticPodStart is the kubelet's allowStaticPodStart: the full name's slot goes to the first
// waiting UID that still has a worker and is not terminating; stale entries ahead of it are dropped.
func (w *Workers) allowStaticPodStart(fullname string, uid types.UID) bool {
	if started, ok := w.startedStatic[fullname]; ok {
		return started == uid
	}
	waiting := w.waitingStatic[fullname]
	for i, waitingUID := range waiting {
		s, ok := w.pods[waitingUID]
		if !ok || s.isTerminationRequested() {
			continue
		}
		if waitingUID != uid {
			w.waitingStatic[fullname] = waiting[i:]
			return false
		}
		waiting = waiting[i+1:]
		break
	}
	if len(waiting) != 0 {
		w.waitingStatic[fullname] = waiting
	} else {
		delete(w.waitingStatic, fullname)
	}
	w.startedStatic[fullname] = uid
	w.version++
	return true
}

// cleanupUnstartedPod is the kubelet's cleanupUnstartedPod: a pod terminated before it was allowed
// to start finishes without any sync function running.
func (w *Workers) cleanupUnstartedPod(s *podStatus, now time.Time) {
	if err := w.transition(s, Finished, "cleanupUnstartedPod"); err != nil {
		return
	}
	s.times.terminated = now
	w.releaseStatic(s)
}

// releaseStatic frees the full name's slot if this worker holds it.
func (w *Workers) releaseStatic(s *podStatus) {
	if w.startedStatic[s.fullname] == s.uid {
		delete(w.startedStatic, s.fullname)
		w.version++
	}
}

// mergeLastUpdate is the kubelet's mergeLastUpdate: it accumulates what the worker processed into
// active. The update type is never kept, so every replay reaches SyncPod as a "sync".
func (s *podStatus) mergeLastUpdate(other UpdateOptions) {
	if s.active == nil {
		s.active = &s.activeBuf
	}
	a := s.active
	if a.Pod == nil || other.RunningPod == nil {
		a.Pod = other.Pod
	}
	a.RunningPod = other.RunningPod
	if other.MirrorPod != nil {
		a.MirrorPod = other.MirrorPod
	}
	if k := other.KillPodOptions; k != nil {
		a.KillPodOptions = &KillPodOptions{
			Evict:                                    k.Evict,
			PodTerminationGracePeriodSecondsOverride: copyInt64(k.PodTerminationGracePeriodSecondsOverride),
		}
	}
}

// acknowledgeTerminating is the kubelet's acknowledgeTerminating: the worker has seen the request
// to terminate, so no container will start again. It returns the last status function registered.
func (w *Workers) acknowledgeTerminating(s *podStatus) func(*v1.PodStatus) {
	if s.isTerminationRequested() && !s.flags.startedTerminating {
		s.flags.startedTerminating = true
		w.changed(s.uid)
	}
	if n := len(s.statusFns); n > 0 {
		return s.statusFns[n-1]
	}
	return nil
}

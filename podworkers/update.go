package podworkers

import (
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/minikubelet/minikubelet/kubecontainer"
	"github.com/minikubelet/minikubelet/sim/trace"
)

// UpdatePod records an update for a pod's worker and never blocks: the kubelet's UpdatePod. The
// update replaces any pending one (coalescing), may request termination, may shorten the grace
// period, and may cancel the sync in flight. The worker acts on it at the next Step.
//
// UpdatePod copies opts and the objects it points to; the caller keeps ownership of them.
func (w *Workers) UpdatePod(opts UpdateOptions) {
	opts = copyOptions(opts)
	// A dropped kill's OnTerminated runs once the update is recorded, not where it is collected.
	// This is for order, not for locking: it keeps its order relative to the trace, and a callback
	// that calls back into the Workers sees the update done.
	var callbacks []func()
	w.updatePod(opts, &callbacks)
	for _, fn := range callbacks {
		fn()
	}
}

func (w *Workers) updatePod(opts UpdateOptions, callbacks *[]func()) {
	// Identify the pod. A runtime-only pod can only be killed; a RunningPod next to a Pod is noise.
	var uid types.UID
	var name, namespace string
	isRuntimePod := false
	switch {
	case opts.Pod != nil:
		opts.RunningPod = nil
		uid, name, namespace = opts.Pod.UID, opts.Pod.Name, opts.Pod.Namespace
	case opts.RunningPod != nil:
		if opts.UpdateType != SyncPodKill {
			return
		}
		uid, name, namespace = opts.RunningPod.ID, opts.RunningPod.Name, opts.RunningPod.Namespace
		isRuntimePod = true
	default:
		return // neither a pod nor a running pod: nothing to act on
	}

	now := w.clock.Now()
	s, known := w.pods[uid]
	firstTime := !known
	if firstTime {
		s = w.newStatus(uid, name, namespace, opts.Pod, now)
	}

	// A runtime-only kill uses the config pod the worker already knows, if any.
	pod := opts.Pod
	if isRuntimePod {
		s.flags.observedRuntime = true
		switch {
		case s.pending != nil && s.pending.Pod != nil:
			pod = s.pending.Pod
			opts.Pod, opts.RunningPod = pod, nil
		case s.active != nil && s.active.Pod != nil:
			pod = s.active.Pod
			opts.Pod, opts.RunningPod = pod, nil
		default:
			pod = runningToAPIPod(opts.RunningPod)
		}
	}

	// A Create for a UID that is terminating means the UID was reused; housekeeping restarts it
	// once the old worker finishes.
	if !firstTime && s.isTerminationRequested() && opts.UpdateType == SyncPodCreate {
		if !s.flags.restartRequested {
			w.emit(s, trace.Event{Event: trace.KindRestartRequested, Func: "UpdatePod"})
			w.version++
		}
		s.flags.restartRequested = true
		return
	}
	if s.state == Finished {
		return
	}

	becameTerminating := false
	if !s.isTerminationRequested() {
		terminate := true
		switch {
		case isRuntimePod, pod.DeletionTimestamp != nil:
			s.flags.deleted = true
		case pod.Status.Phase == v1.PodFailed, pod.Status.Phase == v1.PodSucceeded:
		case opts.UpdateType == SyncPodKill:
			if opts.KillPodOptions != nil && opts.KillPodOptions.Evict {
				s.flags.evicted = true
			}
		default:
			terminate = false
		}
		if terminate {
			if err := w.transition(s, Terminating, "UpdatePod"); err != nil {
				return
			}
			s.times.terminating = now
			becameTerminating = true
		}
	}

	// Once terminating, every update is a kill and the grace period only goes down.
	shortened := false
	switch {
	case s.isTerminated():
		if isRuntimePod {
			return // housekeeping saw a stale runtime pod; the worker is finishing anyway
		}
		if k := opts.KillPodOptions; k != nil && k.OnTerminated != nil {
			*callbacks = append(*callbacks, k.OnTerminated)
		}
		opts.KillPodOptions = nil
	case s.isTerminationRequested():
		if k := opts.KillPodOptions; k != nil {
			if k.OnTerminated != nil {
				s.onTerminated = append(s.onTerminated, k.OnTerminated)
			}
			if k.PodStatusFunc != nil {
				s.statusFns = append(s.statusFns, k.PodStatusFunc)
			}
		} else {
			opts.KillPodOptions = &KillPodOptions{}
		}
		var grace int64
		grace, shortened = effectiveGracePeriod(s.gracePeriod, pod, opts.KillPodOptions)
		s.gracePeriod = grace
		opts.KillPodOptions.PodTerminationGracePeriodSecondsOverride = &grace
	default:
		if k := opts.KillPodOptions; k != nil {
			if k.OnTerminated != nil {
				*callbacks = append(*callbacks, k.OnTerminated)
			}
			opts.KillPodOptions = nil
		}
	}

	hadConfig, wasStatic := s.config()
	s.setPending(opts)
	w.configChanged(s, hadConfig, wasStatic)
	s.pendingSeq = w.nextSeq()
	s.flags.signalled = true
	w.wake(s)

	if becameTerminating || shortened {
		w.cancel(s, now)
	}
}

// newStatus creates the worker for a UID seen for the first time. A pod whose config phase is
// terminal and whose cached runtime status shows nothing running starts out terminated (the
// kubelet-restart case), so that SyncTerminatedPod still runs but nothing is started.
func (w *Workers) newStatus(uid types.UID, name, namespace string, pod *v1.Pod, now time.Time) *podStatus {
	// The key and the full name are two views of one string: one allocation a pod.
	key, fullname := kubecontainer.KeyAndFullName(namespace, name)
	s := &podStatus{
		uid:      uid,
		key:      key,
		fullname: fullname,
		state:    stateNone,
		times:    lifecycleTimes{synced: now},
	}
	w.pods[uid] = s
	initial := Sync
	if pod != nil && (pod.Status.Phase == v1.PodFailed || pod.Status.Phase == v1.PodSucceeded) {
		// The kubelet's podCache.Get: an entry newer than the zero time is any entry at all, and
		// a cache that has none yet answers, like the kubelet's, with an empty status.
		cached, err, ok := w.cache.GetNewerThan(uid, time.Time{})
		if err == nil && (!ok || isStatusTerminal(cached)) {
			initial = Terminated
			s.times.terminating, s.times.terminated = now, now
			s.flags.startedTerminating = true
		}
	}
	// The transition from the pseudo-state is always legal.
	_ = w.transition(s, initial, "UpdatePod")
	// Static pods start in the order of their first update.
	if pod != nil && kubecontainer.IsStaticPod(pod) {
		if waiting := w.waitingStatic[s.fullname]; len(waiting) > 0 {
			w.waitingStatic[s.fullname] = append(waiting, uid)
		} else {
			s.waitingSlot[0] = uid
			w.waitingStatic[s.fullname] = s.waitingSlot[:1:1]
		}
	}
	return s
}

// cancel is the kubelet cancelling the sync context. In v1.35.0 one wait watches that context,
// SyncPod's wait for the pod's volumes (a Result.Wait), which then ends at once; nothing else
// does (TODO #113606): SyncPod runs the runtime's SyncPod on context.WithoutCancel, and
// SyncTerminatingPod, SyncTerminatingRuntimePod and SyncTerminatedPod start from
// context.Background(); the worker's wait for the pod cache does not watch it either. So a sync in
// flight, or a taken update still waiting for the cache, runs to its end with its own options (a
// kill keeps its grace period), and the newer update runs after it. Only the trace shows the
// cancel.
func (w *Workers) cancel(s *podStatus, now time.Time) {
	wk := s.work
	if wk == nil || (wk.called && wk.result.Wait == nil && !wk.done.IsZero() && !wk.done.After(now)) {
		return
	}
	if wk.called && wk.result.Wait != nil {
		// The one wait that watches the context: the sync looks once more, now, and ends.
		due := !wk.done.IsZero() && !wk.done.After(now)
		wk.canceled = true
		if !due {
			wk.done = now
			w.pushBusy(s, wk)
		}
		w.emit(s, trace.Event{Event: trace.KindCancel, Op: workOp(wk), Message: "the sync's wait ends", Func: "UpdatePod"})
		return
	}
	w.emit(s, trace.Event{Event: trace.KindCancel, Op: workOp(wk), Message: "no effect: the sync functions do not watch the context", Func: "UpdatePod"})
}

// isStatusTerminal reports whether a cached runtime status shows no running container and no ready
// sandbox.
func isStatusTerminal(s *kubecontainer.PodStatus) bool {
	if s == nil {
		return true
	}
	for _, c := range s.ContainerStatuses {
		if c.State == kubecontainer.ContainerStateRunning {
			return false
		}
	}
	for _, sb := range s.Sandboxes {
		if sb.State == kubecontainer.SandboxReady {
			return false
		}
	}
	return true
}

// effectiveGracePeriod is the kubelet's calculateEffectiveGracePeriod: starting from the current
// grace period (0 = not set), the pod's deletion grace period and then the kill's override may
// only lower it; with neither, an unset value takes the spec's; the result is at least 1.
// shortened reports that a set grace period changed.
func effectiveGracePeriod(current int64, pod *v1.Pod, kill *KillPodOptions) (grace int64, shortened bool) {
	grace = current
	overridden := false
	if d := pod.DeletionGracePeriodSeconds; d != nil && (grace == 0 || *d < grace) {
		grace, overridden = *d, true
	}
	if kill != nil {
		if o := kill.PodTerminationGracePeriodSecondsOverride; o != nil && (grace == 0 || *o < grace) {
			grace, overridden = *o, true
		}
	}
	if !overridden && grace == 0 && pod.Spec.TerminationGracePeriodSeconds != nil {
		grace = *pod.Spec.TerminationGracePeriodSeconds
	}
	if grace < 1 {
		grace = 1
	}
	return grace, current != 0 && current != grace
}

// runningToAPIPod is the kubelet's Pod.ToAPIPod: a placeholder API pod for a runtime-only pod.
func runningToAPIPod(p *kubecontainer.Pod) *v1.Pod {
	pod := &v1.Pod{}
	pod.UID, pod.Name, pod.Namespace = p.ID, p.Name, p.Namespace
	return pod
}

// copyOptions copies what of opts the workers keep and could otherwise share with a caller that
// changes it later: the runtime pod's lists and the kill options. The API pods are not copied:
// a pod handed on is read-only (docs/design/008-shared-pods.md), and the workers hold the very
// pointer, as the kubelet's pod workers do.
func copyOptions(opts UpdateOptions) UpdateOptions {
	if opts.RunningPod != nil {
		rp := *opts.RunningPod
		rp.Containers = append([]kubecontainer.ContainerStatus(nil), rp.Containers...)
		rp.Sandboxes = append([]kubecontainer.SandboxStatus(nil), rp.Sandboxes...)
		opts.RunningPod = &rp
	}
	if opts.KillPodOptions != nil {
		k := *opts.KillPodOptions
		k.PodTerminationGracePeriodSecondsOverride = copyInt64(k.PodTerminationGracePeriodSecondsOverride)
		opts.KillPodOptions = &k
	}
	return opts
}

func copyInt64(p *int64) *int64 {
	if p == nil {
		return nil
	}
	v := *p
	return &v
}

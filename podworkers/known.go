package podworkers

import (
	"slices"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/minikubelet/minikubelet/kubecontainer"
)

// SyncKnownPods reconciles the workers with the desired pods (every non-mirror pod in config), as
// housekeeping does: the kubelet's SyncKnownPods. It forgets finished workers that are orphaned or
// whose UID was re-created, starts terminating running orphans, and reports every worker it kept.
// From the first call on, unknown UIDs are answered as pods that cannot be running.
//
// The map it returns is the caller's until the next call, which reuses it: housekeeping runs every
// 2s, and a pass with nothing to clean allocates nothing.
func (w *Workers) SyncKnownPods(desired []*v1.Pod) map[types.UID]PodWorkerSync {
	if w.known.desired == nil {
		w.known.desired = make(map[types.UID]bool, len(desired))
		w.known.workers = make(map[types.UID]PodWorkerSync, len(w.pods))
	}
	known, workers := w.known.desired, w.known.workers
	clear(known)
	clear(workers)
	for _, pod := range desired {
		known[pod.UID] = true
	}
	if !w.podsSynced {
		w.podsSynced = true
		w.changed("") // unknown pods now answer as removed
	}
	// Most passes find every worker desired and none to restart: then nothing is forgotten or
	// queued, and the workers are reported without sorting them.
	settled := true
	for uid, s := range w.pods {
		if s.flags.restartRequested || !known[uid] {
			settled = false
			break
		}
	}
	if settled {
		for uid, s := range w.pods {
			workers[uid] = s.sync(false)
		}
		return workers
	}
	// Sorted, so that the replays it queues arrive in the same order on every run.
	uids := w.known.uids[:0]
	for uid := range w.pods {
		uids = append(uids, uid)
	}
	slices.Sort(uids)
	w.known.uids = uids

	for _, uid := range uids {
		s := w.pods[uid]
		orphan := !known[uid]
		if (s.flags.restartRequested || orphan) && w.removeTerminatedWorker(s, orphan) {
			continue
		}
		workers[uid] = s.sync(orphan)
	}
	return workers
}

// sync is what SyncKnownPods reports of the worker.
func (s *podStatus) sync(orphan bool) PodWorkerSync {
	sync := PodWorkerSync{State: s.workType(), Orphan: orphan}
	var pod *v1.Pod
	switch {
	case s.active != nil:
		pod = s.active.Pod
	case s.pending != nil:
		pod = s.pending.Pod
	}
	if pod != nil {
		sync.HasConfig = true
		sync.Static = kubecontainer.IsStaticPod(pod)
	}
	return sync
}

// removeTerminatedWorker is the kubelet's removeTerminatedWorker: it forgets a finished worker, or
// an orphan that never started, and reports true. An orphan that did start is driven to
// termination instead: a running one starts terminating with the spec's grace period (1 without a
// known pod) and its last update is replayed; the replay carries no kill options, so
// SyncTerminatingPod gets a nil grace period, as in the kubelet.
func (w *Workers) removeTerminatedWorker(s *podStatus, orphaned bool) bool {
	if s.state != Finished {
		if !orphaned {
			return false // a restart waits until the old worker finishes
		}
		s.flags.deleted = true
		switch {
		case !s.isStarted() && !s.flags.observedRuntime:
			// Never started: forget it without running any sync.
		case s.state == Sync:
			if err := w.transition(s, Terminating, "removeTerminatedWorker"); err != nil {
				return false
			}
			s.times.terminating = w.clock.Now()
			if s.active != nil && s.active.Pod != nil {
				s.gracePeriod, _ = effectiveGracePeriod(s.gracePeriod, s.active.Pod, nil)
			} else {
				s.gracePeriod = 1
			}
			w.requeueLastPodUpdate(s)
			return false
		default:
			w.requeueLastPodUpdate(s)
			return false
		}
	}
	w.releaseStatic(s)
	w.forget(s, "removeTerminatedWorker")
	return true
}

// State returns the worker's state, and false if the workers do not know uid.
func (w *Workers) State(uid types.UID) (State, bool) {
	if s, ok := w.pods[uid]; ok {
		return s.state, true
	}
	return 0, false
}

// States returns the state of every worker the Workers know, keyed by UID, in a fresh map the
// caller may keep and change. It is a read-only view for cross-component invariant checks; a
// finished worker reports Finished, unlike SyncKnownPods.
func (w *Workers) States() map[types.UID]State {
	states := make(map[types.UID]State, len(w.pods))
	for uid, s := range w.pods {
		states[uid] = s.state
	}
	return states
}

// query answers a question about uid: known for a known worker, else unknown(podsSynced).
func (w *Workers) query(uid types.UID, known func(*podStatus) bool, unknown func(podsSynced bool) bool) bool {
	if s, ok := w.pods[uid]; ok {
		return known(s)
	}
	return unknown(w.podsSynced)
}

func no(bool) bool                { return false }
func synced(podsSynced bool) bool { return podsSynced }

// IsPodKnownTerminated reports whether a known pod has no running containers any more. An unknown
// pod is not known to be terminated.
func (w *Workers) IsPodKnownTerminated(uid types.UID) bool {
	return w.query(uid, (*podStatus).isTerminated, no)
}

// CouldHaveRunningContainers reports whether the pod may have running containers: a known pod until
// it is terminated, an unknown one only until the first SyncKnownPods.
func (w *Workers) CouldHaveRunningContainers(uid types.UID) bool {
	return w.query(uid, func(s *podStatus) bool { return !s.isTerminated() }, func(ps bool) bool { return !ps })
}

// ShouldPodBeFinished reports whether the pod's worker has finished; an unknown pod counts as
// finished once SyncKnownPods has run.
func (w *Workers) ShouldPodBeFinished(uid types.UID) bool {
	return w.query(uid, func(s *podStatus) bool { return s.state == Finished }, synced)
}

// IsPodTerminationRequested reports whether termination was requested for a known pod. It is false
// for an unknown pod; cleanup loops should use ShouldPodContainersBeTerminating.
func (w *Workers) IsPodTerminationRequested(uid types.UID) bool {
	return w.query(uid, (*podStatus).isTerminationRequested, no)
}

// ShouldPodContainersBeTerminating reports whether the worker has picked up the termination, so no
// container of the pod may start again; an unknown pod counts once SyncKnownPods has run.
func (w *Workers) ShouldPodContainersBeTerminating(uid types.UID) bool {
	return w.query(uid, func(s *podStatus) bool { return s.flags.startedTerminating }, synced)
}

// ShouldPodRuntimeBeRemoved reports whether the pod's runtime resources may be torn down: a known
// pod once terminated, an unknown one once SyncKnownPods has run.
func (w *Workers) ShouldPodRuntimeBeRemoved(uid types.UID) bool {
	return w.query(uid, (*podStatus).isTerminated, synced)
}

// ShouldPodContentBeRemoved reports whether all of the pod's content may be removed: an evicted
// pod, or a deleted one once terminated; an unknown pod once SyncKnownPods has run.
func (w *Workers) ShouldPodContentBeRemoved(uid types.UID) bool {
	return w.query(uid, func(s *podStatus) bool {
		return s.flags.evicted || (s.flags.deleted && s.isTerminated())
	}, synced)
}

// IsPodForMirrorPodTerminatingByFullName reports whether the static pod that holds the full name is
// terminating and not yet terminated. Housekeeping leaves that pod's orphaned mirror pod alone.
func (w *Workers) IsPodForMirrorPodTerminatingByFullName(fullname string) bool {
	uid, ok := w.startedStatic[fullname]
	if !ok {
		return false
	}
	s, ok := w.pods[uid]
	return ok && s.isTerminationRequested() && !s.isTerminated()
}

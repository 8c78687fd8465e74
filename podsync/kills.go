package podsync

import (
	"sort"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/minikubelet/minikubelet/api/podkey"
	"github.com/minikubelet/minikubelet/sim/trace"
)

// Advance finishes every SyncTerminatingPod whose kill ended by now, earliest first: the check
// that nothing runs any more and the final status. A failure is traced; the pod worker already
// counted the call as done (docs/fidelity.md).
func (s *Syncer) Advance() {
	for _, pod := range s.kills.popDue(s.opts.Clock.Now()) {
		if err := s.finishTerminating(pod); err != nil {
			s.emit(trace.Event{Component: trace.SyncLoop, Event: trace.KindError, Pod: podkey.Of(pod), UID: string(pod.UID), Reason: "KillPodIncomplete", Message: err.Error(), Func: "SyncTerminatingPod"})
		}
	}
}

// NextWake returns when the earliest pending kill ends, and false when none is pending.
func (s *Syncer) NextWake() (time.Time, bool) { return s.kills.nextWake() }

// killQueue holds the SyncTerminatingPod calls whose kill ends after the call returned, keyed by
// UID: a shorter grace period makes the worker call SyncTerminatingPod again, and the newer kill
// replaces the older one.
type killQueue map[types.UID]pendingKill

// pendingKill is a kill in progress: the pod and when its last container stops.
type pendingKill struct {
	pod  *v1.Pod
	done time.Time
}

func (q killQueue) add(pod *v1.Pod, done time.Time) {
	q[pod.UID] = pendingKill{pod: pod, done: done}
}

// popDue removes and returns the pods whose kill ended by now, earliest first, ties by UID.
func (q killQueue) popDue(now time.Time) []*v1.Pod {
	var due []pendingKill
	for uid, k := range q {
		if !k.done.After(now) {
			due = append(due, k)
			delete(q, uid)
		}
	}
	sort.Slice(due, func(i, j int) bool {
		if !due[i].done.Equal(due[j].done) {
			return due[i].done.Before(due[j].done)
		}
		return due[i].pod.UID < due[j].pod.UID
	})
	pods := make([]*v1.Pod, len(due))
	for i, k := range due {
		pods[i] = k.pod
	}
	return pods
}

// nextWake returns the earliest end of a pending kill.
func (q killQueue) nextWake() (time.Time, bool) {
	var w time.Time
	for _, k := range q {
		if w.IsZero() || k.done.Before(w) {
			w = k.done
		}
	}
	return w, !w.IsZero()
}

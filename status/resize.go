package status

import (
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// resizeConditions are a pod's in-place resize conditions as the v1.35 status manager caches
// them (podResizeConditions): PodResizePending while the allocation manager has not allocated a
// resize (reason Deferred or Infeasible), PodResizeInProgress while the runtime has not actuated
// an allocated one (reason empty, or Error after a failed UpdateContainerResources).
type resizeConditions struct {
	pending, inProgress *v1.PodCondition
}

// PodResizeConditions returns copies of the pod's resize conditions, PodResizePending first, for
// the status the sync functions generate (GetPodResizeConditions).
func (m *Manager) PodResizeConditions(uid types.UID) []v1.PodCondition {
	var out []v1.PodCondition
	rc := m.resizes[uid]
	for _, c := range []*v1.PodCondition{rc.pending, rc.inProgress} {
		if c != nil {
			out = append(out, *c.DeepCopy())
		}
	}
	return out
}

// SetPodResizePendingCondition sets PodResizePending with reason (Deferred or Infeasible) and
// message, observed at generation. It reports whether the condition is new or its reason or
// generation changed, which is when the kubelet records an event.
func (m *Manager) SetPodResizePendingCondition(uid types.UID, reason, message string, generation int64) bool {
	rc := m.resizeFor(uid)
	prev := rc.pending
	rc.pending = m.resizeCondition(v1.PodResizePending, prev, reason, message, generation)
	m.resizes[uid] = rc
	return prev == nil || prev.Reason != reason || prev.ObservedGeneration != generation
}

// SetPodResizeInProgressCondition sets PodResizeInProgress. A condition already there keeps its
// observed generation, and its reason and message unless new ones are given; it returns the
// generation and whether anything but the probe time changed.
func (m *Manager) SetPodResizeInProgressCondition(uid types.UID, reason, message string, generation int64) (int64, bool) {
	rc := m.resizeFor(uid)
	prev := rc.inProgress
	if prev != nil {
		if reason == "" && message == "" {
			reason, message = prev.Reason, prev.Message
		}
		generation = prev.ObservedGeneration
	}
	rc.inProgress = m.resizeCondition(v1.PodResizeInProgress, prev, reason, message, generation)
	m.resizes[uid] = rc
	changed := prev == nil || prev.Reason != reason || prev.Message != message
	return generation, changed
}

// BackfillPodResizeConditions takes into the cache the resize conditions the pods' statuses
// show, as the kubelet does when pods are added (a restarted kubelet finds them in the API
// server): each is set anew, probed and transitioned now, with its reason, message and observed
// generation.
func (m *Manager) BackfillPodResizeConditions(pods []*v1.Pod) {
	for _, pod := range pods {
		for i := range pod.Status.Conditions {
			c := &pod.Status.Conditions[i]
			if c.Type != v1.PodResizePending && c.Type != v1.PodResizeInProgress {
				continue
			}
			rc := m.resizeFor(pod.UID)
			cond := m.resizeCondition(c.Type, nil, c.Reason, c.Message, c.ObservedGeneration)
			if c.Type == v1.PodResizePending {
				rc.pending = cond
			} else {
				rc.inProgress = cond
			}
			m.resizes[pod.UID] = rc
		}
	}
}

// ClearPodResizePendingCondition drops PodResizePending.
func (m *Manager) ClearPodResizePendingCondition(uid types.UID) {
	rc, ok := m.resizes[uid]
	if !ok || rc.pending == nil {
		return
	}
	rc.pending = nil
	m.resizes[uid] = rc
}

// ClearPodResizeInProgressCondition drops PodResizeInProgress and returns the generation it had
// observed; false when there was none.
func (m *Manager) ClearPodResizeInProgressCondition(uid types.UID) (int64, bool) {
	rc, ok := m.resizes[uid]
	if !ok || rc.inProgress == nil {
		return 0, false
	}
	gen := rc.inProgress.ObservedGeneration
	rc.inProgress = nil
	m.resizes[uid] = rc
	return gen, true
}

// resizeFor returns the pod's resize conditions for a setter; a pod that has none yet moves
// Version, as RemoveOrphanedStatuses will have it to forget.
func (m *Manager) resizeFor(uid types.UID) resizeConditions {
	rc, ok := m.resizes[uid]
	if !ok {
		m.version++
	}
	return rc
}

// IsPodResizeDeferred and IsPodResizeInfeasible read PodResizePending's reason.
func (m *Manager) IsPodResizeDeferred(uid types.UID) bool {
	c := m.resizes[uid].pending
	return c != nil && c.Reason == v1.PodReasonDeferred
}

// IsPodResizeInfeasible reports whether the pod's resize is pending as Infeasible.
func (m *Manager) IsPodResizeInfeasible(uid types.UID) bool {
	c := m.resizes[uid].pending
	return c != nil && c.Reason == v1.PodReasonInfeasible
}

// resizeCondition is updatedPodResizeCondition: probed now, and transitioned now unless the
// reason is the old one's.
func (m *Manager) resizeCondition(t v1.PodConditionType, old *v1.PodCondition, reason, message string, generation int64) *v1.PodCondition {
	now := metav1.NewTime(m.clock.Now())
	ltt := now
	if old != nil && old.Reason == reason {
		ltt = old.LastTransitionTime
	}
	return &v1.PodCondition{Type: t, Status: v1.ConditionTrue, LastProbeTime: now, LastTransitionTime: ltt,
		ObservedGeneration: generation, Reason: reason, Message: message}
}

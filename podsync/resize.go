package podsync

import (
	"errors"

	v1 "k8s.io/api/core/v1"

	"github.com/minikubelet/minikubelet/events"
	"github.com/minikubelet/minikubelet/kubecontainer"
)

// watchResizeKey is the key of the PLEG watch condition a resize action sets.
const watchResizeKey = "doPodResizeAction"

// allocated is the pod the pod workers hand the sync functions in v1.35: the one the API has,
// with the resources the allocation manager allocated in place of the desired ones.
func (s *Syncer) allocated(pod *v1.Pod) *v1.Pod {
	if s.opts.Resizes == nil {
		return pod
	}
	p, _ := s.opts.Resizes.Allocation.UpdatePodFromAllocation(pod)
	return p
}

// resizeInProgress is SyncPod's first step with in-place resize: PodResizeInProgress is set
// while the runtime's resources differ from the allocated ones, and cleared, with the
// ResizeCompleted event, once they agree.
func (s *Syncer) resizeInProgress(pod *v1.Pod, podStatus *kubecontainer.PodStatus) {
	r := s.opts.Resizes
	if r == nil {
		return
	}
	if r.Runtime.IsPodResizeInProgress(pod, podStatus) {
		r.Conditions.SetPodResizeInProgressCondition(pod.UID, "", "", pod.Generation)
		return
	}
	if gen, cleared := r.Conditions.ClearPodResizeInProgressCondition(pod.UID); cleared {
		s.recordEvent(pod, v1.EventTypeNormal, events.ResizeCompleted, events.PodResizeCompletedMsg(pod, gen))
	}
}

// resizeActuated follows the runtime's SyncPod: after a resize action the PLEG reinspects the
// pod at its next relist; a failed UpdateContainerResources marks PodResizeInProgress with reason
// Error and, when that changed the condition, records ResizeError.
func (s *Syncer) resizeActuated(pod *v1.Pod, res kubecontainer.Result, err error) {
	r := s.opts.Resizes
	if r == nil {
		return
	}
	if res.Resized {
		r.PLEG.SetPodWatchCondition(pod.UID, watchResizeKey, func(*kubecontainer.PodStatus) bool { return true })
	}
	if err == nil {
		return // before the target of errors.As, which escapes: nearly every sync ends here
	}
	var rerr *kubecontainer.ResizeError
	if !errors.As(err, &rerr) {
		return
	}
	if gen, updated := r.Conditions.SetPodResizeInProgressCondition(pod.UID, v1.PodReasonError, rerr.Message, pod.Generation); updated {
		s.recordEvent(pod, v1.EventTypeWarning, events.ResizeError, events.PodResizeErrorMsg(pod, gen, rerr.Message))
	}
}

// resizeConditions are the resize conditions the generated status carries: none for a terminal
// pod, whose conditions are dropped (determinePodResizeStatus).
func (s *Syncer) resizeConditions(pod *v1.Pod, podIsTerminal bool) []v1.PodCondition {
	r := s.opts.Resizes
	if r == nil {
		return nil
	}
	if podIsTerminal {
		r.Conditions.ClearPodResizeInProgressCondition(pod.UID)
		r.Conditions.ClearPodResizePendingCondition(pod.UID)
		return nil
	}
	return r.Conditions.PodResizeConditions(pod.UID)
}

package podsync

import (
	"fmt"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/minikubelet/minikubelet/api/podkey"
	"github.com/minikubelet/minikubelet/kubecontainer"
)

// SkipCheck is the evidence for the periodic skip (Options.CheckSkip): how many syncs took it,
// and the first that would have built a status the status manager did not find unchanged. One
// SkipCheck may serve several Syncers (a replay's nodes and their restarts) on one goroutine.
type SkipCheck struct {
	// Skips counts the syncs that took the skip.
	Skips int
	// Err is the first divergence, nil while there is none.
	Err error
}

// check builds the status a sync that took the skip would otherwise have built and hands it to
// the status manager, which must find it unchanged: then nothing happened, as with the skip.
// Anything else is recorded as the divergence it is (and the status manager keeps the status,
// as a sync without the skip would have had it do).
func (c *SkipCheck) check(s *Syncer, pod *v1.Pod, podStatus *kubecontainer.PodStatus) {
	c.Skips++
	apiStatus := s.generateStatus(pod, podStatus, false, &s.buffers)
	var why string
	switch {
	case apiStatus.Phase == v1.PodSucceeded || apiStatus.Phase == v1.PodFailed:
		why = fmt.Sprintf("the status built is terminal (%s)", apiStatus.Phase)
	case !s.resync.ResyncPodStatus(pod, apiStatus):
		why = "the status manager did not find the status built unchanged"
	default:
		return
	}
	if c.Err == nil {
		c.Err = fmt.Errorf("pod %s (uid %s) at %s: the sync skipped building its status, but %s",
			podkey.Of(pod), pod.UID, s.opts.Clock.Now().UTC().Format(time.RFC3339Nano), why)
	}
}

// StatusResyncer is what the periodic skip needs of the status manager beyond StatusManager;
// status.Manager has it. With a StatusManager that lacks it, every sync builds the status.
type StatusResyncer interface {
	// ResyncPodStatus is SetPodStatus that reports whether the status compared equal to the
	// cached one, so that nothing happened (no new version, no write, no refusal in the trace).
	ResyncPodStatus(pod *v1.Pod, status v1.PodStatus) (unchanged bool)
	// PodStatusStamp names the cached status: it changes whenever the cached status does.
	PodStatusStamp(uid types.UID) (uint64, bool)
}

// statusMemo is what a sync's status was built from, kept when the status manager found the
// result equal to the status it had (ResyncPodStatus): the pod as handed to SyncPod (after the
// allocation), the runtime's status (the PLEG cache's own, shared), and the stamp of the cached
// status the result was compared with, which it also was built from.
type statusMemo struct {
	pod     *v1.Pod
	runtime *kubecontainer.PodStatus
	stamp   uint64
}

// unchangedStatus returns the cached status when building the pod's status again would give a
// status the status manager finds equal to it, so that SyncPod may skip the building and the
// SetPodStatus that would do nothing: the kubelet builds and compares the status at every sync,
// which is a cost of its code and not an observable behaviour.
//
// The proof: the last sync of the pod built its status from the same inputs and the status
// manager found that status equal to the cached one, which has not changed since (same stamp).
// generateStatus is a function of its inputs and of the clock, and with the same inputs the clock
// only moves the transition times of conditions that changed, which the comparison leaves out
// (equalByKubelet, the kubelet's isPodStatusByKubeletEqual), and the start time, which the cached
// status already has. Its inputs are the pod (spec, metadata, API status: a pod handed on is
// never changed, docs/design/008-shared-pods.md, so the same pointer is the same pod), the
// runtime's status (the PLEG cache stores each status it reads and hands out that very one, so
// the same pointer is the same status), the cached status (the stamp), the node's IP (fixed), and
// three more that skippable and this function require to be empty or absent both times: the
// reasons of the last runtime sync, the resize conditions, and the probe results (a pod without
// probes reads none; the prober's UpdatePodStatus also triggers the readiness probe of a started
// container, a side effect only a pod with a readiness probe has). The active deadline is left
// out since it reads the clock and records an event at every sync once passed, and a pod being
// deleted since its status is written even when equal.
//
// The proof needs the runtime's status unchanged after the PLEG cache handed it out. The
// kubelet's SyncPod breaks that for one field: it writes the IPs of the API status it built
// into podStatus.IPs, the cached status itself. minikubelet does not model that write; whoever
// does must write into a copy of the status, or the same pointer no longer means the same
// status and the skip serves a status built from stale inputs.
func (s *Syncer) unchangedStatus(pod *v1.Pod, podStatus *kubecontainer.PodStatus) (v1.PodStatus, bool) {
	if s.resync == nil {
		return v1.PodStatus{}, false
	}
	m, ok := s.memos[pod.UID]
	if !ok || m.pod != pod || m.runtime != podStatus || podStatus == nil || !s.inputsEmpty(pod) {
		return v1.PodStatus{}, false
	}
	if stamp, ok := s.resync.PodStatusStamp(pod.UID); !ok || stamp != m.stamp {
		return v1.PodStatus{}, false
	}
	return s.opts.Status.GetPodStatus(pod.UID)
}

// setStatus hands the status SyncPod built to the status manager and keeps what it was built
// from when the manager found it unchanged and the pod may be skipped (unchangedStatus).
func (s *Syncer) setStatus(pod *v1.Pod, podStatus *kubecontainer.PodStatus, apiStatus v1.PodStatus) {
	if s.resync == nil || podStatus == nil || !skippable(pod) || !s.inputsEmpty(pod) {
		delete(s.memos, pod.UID)
		s.opts.Status.SetPodStatus(pod, apiStatus)
		return
	}
	if !s.resync.ResyncPodStatus(pod, apiStatus) {
		delete(s.memos, pod.UID)
		return
	}
	stamp, ok := s.resync.PodStatusStamp(pod.UID)
	if !ok {
		delete(s.memos, pod.UID)
		return
	}
	s.memos[pod.UID] = statusMemo{pod: pod, runtime: podStatus, stamp: stamp}
}

// inputsEmpty reports whether the inputs of generateStatus that the memo does not name are
// empty now: no reason from the last runtime sync, no resize condition.
func (s *Syncer) inputsEmpty(pod *v1.Pod) bool {
	if s.reasons[pod.UID] != nil {
		return false
	}
	if r := s.opts.Resizes; r != nil && len(r.Conditions.PodResizeConditions(pod.UID)) > 0 {
		return false
	}
	return true
}

// skippable reports whether the pod's status depends on nothing but the memo's inputs and
// inputsEmpty's: no probes, no active deadline, not being deleted.
func skippable(pod *v1.Pod) bool {
	if pod.DeletionTimestamp != nil || pod.Spec.ActiveDeadlineSeconds != nil {
		return false
	}
	for _, list := range [][]v1.Container{pod.Spec.InitContainers, pod.Spec.Containers} {
		for i := range list {
			c := &list[i]
			if c.ReadinessProbe != nil || c.LivenessProbe != nil || c.StartupProbe != nil {
				return false
			}
		}
	}
	return true
}

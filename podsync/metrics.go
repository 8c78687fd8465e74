package podsync

import (
	"time"

	v1 "k8s.io/api/core/v1"

	"github.com/minikubelet/minikubelet/kubecontainer"
	"github.com/minikubelet/minikubelet/podworkers"
)

// Metrics is where SyncPod records its latencies, measured from the time the kubelet first saw
// the pod (the kubernetes.io/config.seen annotation).
type Metrics interface {
	// ObservePodWorkerStart is kubelet_pod_worker_start_duration_seconds.
	ObservePodWorkerStart(d time.Duration)
	// ObservePodStart is kubelet_pod_start_duration_seconds.
	ObservePodStart(d time.Duration)
}

// firstSeen reads the pod's first-seen annotation; zero when it is missing or unreadable.
func firstSeen(pod *v1.Pod) time.Time {
	v, ok := pod.Annotations[kubecontainer.ConfigFirstSeenAnnotationKey]
	if !ok || v == "" {
		return time.Time{} // without parsing: the parse error of "" is an allocation at every sync
	}
	t, err := time.Parse(time.RFC3339Nano, v)
	if err != nil {
		return time.Time{}
	}
	return t
}

// observeWorkerStart records, on the create sync of a pod with a first-seen time, how long the
// pod waited for its worker, as the kubelet's SyncPod does.
func (s *Syncer) observeWorkerStart(updateType podworkers.SyncPodType, pod *v1.Pod) {
	if s.opts.Metrics == nil || updateType != podworkers.SyncPodCreate {
		return
	}
	if seen := firstSeen(pod); !seen.IsZero() {
		s.opts.Metrics.ObservePodWorkerStart(s.opts.Clock.Since(seen))
	}
}

// observePodStart records the time to running with the kubelet's condition, quirk included: a
// pod without any status yet is observed whatever its phase, and from the zero time when it has
// no first-seen time (the kubelet's !ok || (Pending → Running && seen) test).
func (s *Syncer) observePodStart(pod *v1.Pod, apiStatus v1.PodStatus) {
	if s.opts.Metrics == nil {
		return
	}
	seen := firstSeen(pod)
	phase, ok := s.opts.Status.GetPodPhase(pod.UID)
	if !ok || phase == v1.PodPending && apiStatus.Phase == v1.PodRunning && !seen.IsZero() {
		s.opts.Metrics.ObservePodStart(s.opts.Clock.Since(seen))
	}
}

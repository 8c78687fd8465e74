package status

import (
	"github.com/minikubelet/minikubelet/kubecontainer"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
)

// ProbeStatus sets the started and ready fields of a freshly generated status from the probe
// results: the kubelet's prober manager as generateAPIPodStatus calls it (its UpdatePodStatus).
// It is handed the two lists of container statuses, which it changes in place, rather than the
// status by pointer: those fields are all it sets, and a status handed by pointer through an
// interface would have to live on the heap, one allocation of the whole status at every build.
type ProbeStatus interface {
	UpdateContainerStatuses(pod *v1.Pod, containers, initContainers []v1.ContainerStatus)
}

// SetContainerReadiness flips the ready field of the container instance containerID (the runtime's
// ID, without the "type://" prefix) in the pod's cached status, recomputes the Ready and
// ContainersReady conditions and queues the status for writing, without waiting for a pod sync:
// the kubelet's SetContainerReadiness, called when a readiness result changes. It does nothing for
// a pod the pod manager does not know or that has no cached status yet, for an unknown container,
// or when the value is unchanged.
func (m *Manager) SetContainerReadiness(uid types.UID, containerID string, ready bool) {
	m.setContainer(uid, containerID, "SetContainerReadiness", func(s *v1.PodStatus, cs *v1.ContainerStatus, pod *v1.Pod) bool {
		if cs.Ready == ready {
			return false
		}
		cs.Ready = ready
		all := append(append([]v1.ContainerStatus{}, s.InitContainerStatuses...), s.ContainerStatuses...)
		containersReady := containersReadyCondition(pod, all, s.Phase)
		setCondition(s, readyConditionOf(pod, s.Conditions, containersReady))
		setCondition(s, containersReady)
		return true
	})
}

// SetContainerStartup sets the started field of the container instance containerID in the pod's
// cached status and queues the status for writing: the kubelet's SetContainerStartup, called when
// a startup result changes. The conditions are left to the next pod sync.
func (m *Manager) SetContainerStartup(uid types.UID, containerID string, started bool) {
	m.setContainer(uid, containerID, "SetContainerStartup", func(_ *v1.PodStatus, cs *v1.ContainerStatus, _ *v1.Pod) bool {
		if cs.Started != nil && *cs.Started == started {
			return false
		}
		cs.Started = &started
		return true
	})
}

// setContainer applies change to a copy of the cached status's container with the ID, and
// records the copy when change reports a change.
func (m *Manager) setContainer(uid types.UID, containerID, fn string, change func(*v1.PodStatus, *v1.ContainerStatus, *v1.Pod) bool) {
	pod, ok := m.pods.GetPodByUID(uid)
	if !ok {
		return
	}
	cached, ok := m.statuses[pod.UID]
	if !ok {
		return
	}
	s := *cached.status.DeepCopy()
	cs := findContainerByID(&s, kubecontainer.RuntimeScheme+containerID)
	if cs == nil || !change(&s, cs, pod) {
		return
	}
	m.update(pod, s, false, false, fn)
}

// findContainerByID returns the main or init container status with the API container ID.
func findContainerByID(s *v1.PodStatus, id string) *v1.ContainerStatus {
	for _, list := range [][]v1.ContainerStatus{s.ContainerStatuses, s.InitContainerStatuses} {
		for i := range list {
			if list[i].ContainerID == id {
				return &list[i]
			}
		}
	}
	return nil
}

// setCondition replaces the condition of c's type in s, or appends c.
func setCondition(s *v1.PodStatus, c v1.PodCondition) {
	for i := range s.Conditions {
		if s.Conditions[i].Type == c.Type {
			s.Conditions[i] = c
			return
		}
	}
	s.Conditions = append(s.Conditions, c)
}

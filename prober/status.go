package prober

import (
	v1 "k8s.io/api/core/v1"

	"github.com/minikubelet/minikubelet/kubecontainer"
	"github.com/minikubelet/minikubelet/prober/results"
)

// UpdateContainerStatuses sets the started and ready fields of every container status in the two
// lists of a pod's status from the results caches and the workers: the kubelet's
// UpdatePodStatus, which generateAPIPodStatus calls before it computes the pod's conditions. It
// changes the lists in place and sets nothing else (the status package's ProbeStatus takes the
// lists, so that the status it builds stays off the heap). A started, running container whose
// readiness probe has not succeeded yet gets its readiness worker triggered, so that readiness
// is probed right after the start instead of at the next tick.
func (m *Manager) UpdateContainerStatuses(pod *v1.Pod, containers, initContainers []v1.ContainerStatus) {
	for i := range containers {
		cs := &containers[i]
		started := m.isStarted(pod, cs)
		cs.Started = &started
		if !started {
			continue
		}
		ready, settled := m.isReady(pod, cs)
		if spec := containerSpec(pod.Spec.Containers, cs.Name); spec != nil && !settled {
			m.readyOnKubeletRestart(&ready, pod, cs, spec)
		}
		cs.Ready = ready
	}
	for i := range initContainers {
		cs := &initContainers[i]
		started := m.isStarted(pod, cs)
		cs.Started = &started
		spec := containerSpec(pod.Spec.InitContainers, cs.Name)
		if spec == nil {
			continue
		}
		if !kubecontainer.IsRestartableInitContainer(spec) {
			if cs.State.Terminated != nil && cs.State.Terminated.ExitCode == 0 {
				cs.Ready = true
			}
			continue
		}
		if !started {
			continue
		}
		ready, settled := m.isReady(pod, cs)
		if !settled {
			m.readyOnKubeletRestart(&ready, pod, cs, spec)
		}
		cs.Ready = ready
	}
}

// isStarted is the kubelet's isContainerStarted.
func (m *Manager) isStarted(pod *v1.Pod, cs *v1.ContainerStatus) bool {
	if cs.State.Running == nil {
		return false
	}
	if r, ok := m.caches[Startup].Get(runtimeID(cs.ContainerID)); ok {
		return r == results.Success
	}
	// ChangeContainerStatusOnKubeletRestart is off: a running container keeps the started flag
	// its previous status had.
	if cs.Started != nil && *cs.Started {
		return true
	}
	_, hasWorker := m.workers[workerKey{pod.UID, cs.Name, Startup}]
	return !hasWorker
}

// isReady is the readiness half of UpdatePodStatus for a started container. settled is true when
// the container is not running or its readiness probe succeeded, the cases the kubelet's restart
// rule leaves alone.
func (m *Manager) isReady(pod *v1.Pod, cs *v1.ContainerStatus) (ready, settled bool) {
	if cs.State.Running == nil {
		return false, true
	}
	if r, ok := m.caches[Readiness].Get(runtimeID(cs.ContainerID)); ok && r == results.Success {
		return true, true
	}
	w, ok := m.workers[workerKey{pod.UID, cs.Name, Readiness}]
	if !ok {
		return true, false // no readiness probe: always ready
	}
	if !w.triggered {
		w.triggered, w.triggerAt = true, m.opts.Clock.Now()
	}
	return false, false
}

// readyOnKubeletRestart is the kubelet's setReadyStateOnKubeletRestart: a main container or
// sidecar that was running before the kubelet (re)started is ready until its readiness worker has a result, unless
// it has a readiness probe and the pod was not Ready.
func (m *Manager) readyOnKubeletRestart(ready *bool, pod *v1.Pod, cs *v1.ContainerStatus, spec *v1.Container) {
	if cs.State.Running == nil || cs.State.Running.StartedAt.IsZero() ||
		!cs.State.Running.StartedAt.Time.Before(m.start.Add(-restartGracePeriod)) {
		return
	}
	if !*ready {
		if _, ok := m.caches[Readiness].Get(runtimeID(cs.ContainerID)); !ok {
			*ready = true
		}
	}
	if spec.ReadinessProbe != nil {
		for _, c := range pod.Status.Conditions {
			if c.Type == v1.PodReady && c.Status == v1.ConditionTrue {
				return
			}
		}
		*ready = false
	}
}

// containerSpec returns the named container of the list, or nil.
func containerSpec(list []v1.Container, name string) *v1.Container {
	for i := range list {
		if list[i].Name == name {
			return &list[i]
		}
	}
	return nil
}

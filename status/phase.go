package status

import (
	v1 "k8s.io/api/core/v1"

	"github.com/minikubelet/minikubelet/kubecontainer"
)

// GetPhase returns the phase of pod given the API statuses of its containers and init containers
// (in any order, looked up by name): the kubelet's getPhase.
//
// podIsTerminal says the pod worker has decided the pod will never run again (SyncTerminatingPod
// and SyncTerminatedPod pass true). Then a pod whose containers all stopped is Succeeded or Failed
// whatever its restart policy, except a static pod, which the kubelet never forces terminal.
//
// podHasInitialized says a regular container has run in the pod's current sandbox (the
// kubelet's HasAnyActiveRegularContainerStarted): a sidecar that is restarting then does not send
// the pod back to Pending.
//
// Whether a stopped container runs again is kubecontainer.ContainerShouldRestart, as in v1.35
// with the ContainerRestartRules gate on: a container's own restartPolicy and rules come before
// the pod's, and sidecars do not count once they stopped.
func GetPhase(pod *v1.Pod, info []v1.ContainerStatus, podIsTerminal, podHasInitialized bool) v1.PodPhase {
	spec := &pod.Spec
	var (
		pendingInit, failedInitNotRestartable, pendingSidecars int
		unknown, running, waiting, stopped, succeeded          int
		stoppedNotRestartable                                  int
	)

	for i := range spec.InitContainers {
		c := &spec.InitContainers[i]
		if kubecontainer.IsRestartableInitContainer(c) {
			continue
		}
		cs, ok := findStatus(info, c.Name)
		switch {
		case !ok, cs.State.Running != nil:
			pendingInit++
		case cs.State.Terminated != nil:
			if code := cs.State.Terminated.ExitCode; code != 0 && !kubecontainer.ContainerShouldRestart(c, spec, code) {
				failedInitNotRestartable++
			}
		case cs.State.Waiting != nil:
			if last := cs.LastTerminationState.Terminated; last != nil {
				if last.ExitCode != 0 && !kubecontainer.ContainerShouldRestart(c, spec, last.ExitCode) {
					failedInitNotRestartable++
				}
			} else {
				pendingInit++
			}
		default:
			pendingInit++
		}
	}

	for i := range spec.InitContainers {
		c := &spec.InitContainers[i]
		if !kubecontainer.IsRestartableInitContainer(c) {
			continue
		}
		cs, ok := findStatus(info, c.Name)
		switch {
		case !ok:
			unknown++
		case cs.State.Running != nil:
			if cs.Started == nil || !*cs.Started {
				pendingSidecars++
			}
			running++
		case cs.State.Terminated != nil:
			// A stopped sidecar does not count towards the phase.
		case cs.State.Waiting != nil:
			if cs.LastTerminationState.Terminated == nil {
				pendingSidecars++
				waiting++
			}
		default:
			pendingSidecars++
			unknown++
		}
	}

	for i := range spec.Containers {
		c := &spec.Containers[i]
		cs, ok := findStatus(info, c.Name)
		switch {
		case !ok:
			unknown++
		case cs.State.Running != nil:
			running++
		case cs.State.Terminated != nil:
			stopped++
			if !kubecontainer.ContainerShouldRestart(c, spec, cs.State.Terminated.ExitCode) {
				stoppedNotRestartable++
			}
			if cs.State.Terminated.ExitCode == 0 {
				succeeded++
			}
		case cs.State.Waiting != nil:
			if last := cs.LastTerminationState.Terminated; last != nil {
				stopped++
				if !kubecontainer.ContainerShouldRestart(c, spec, last.ExitCode) {
					stoppedNotRestartable++
				}
			} else {
				waiting++
			}
		default:
			unknown++
		}
	}

	if failedInitNotRestartable > 0 {
		return v1.PodFailed
	}
	switch {
	case pendingInit > 0, pendingSidecars > 0 && !podHasInitialized, waiting > 0:
		return v1.PodPending
	case running > 0 && unknown == 0:
		return v1.PodRunning
	case running == 0 && stopped > 0 && unknown == 0:
		if podIsTerminal && !kubecontainer.IsStaticPod(pod) {
			if stopped == succeeded {
				return v1.PodSucceeded
			}
			return v1.PodFailed
		}
		if stopped != stoppedNotRestartable {
			return v1.PodRunning // at least one container is restarting
		}
		if stopped == succeeded {
			return v1.PodSucceeded
		}
		return v1.PodFailed
	default:
		return v1.PodPending
	}
}

// isTerminal reports whether phase is Succeeded or Failed, the phases a pod never leaves.
func isTerminal(phase v1.PodPhase) bool {
	return phase == v1.PodSucceeded || phase == v1.PodFailed
}

// findStatus returns the status named name.
func findStatus(statuses []v1.ContainerStatus, name string) (v1.ContainerStatus, bool) {
	for i := range statuses {
		if statuses[i].Name == name {
			return statuses[i], true
		}
	}
	return v1.ContainerStatus{}, false
}

// anyRegularContainerStarted reports whether a regular (not init) container is running or has
// terminated, which means the pod got past initialization at least once.
func anyRegularContainerStarted(spec *v1.PodSpec, statuses []v1.ContainerStatus) bool {
	for i := range spec.Containers {
		cs, ok := findStatus(statuses, spec.Containers[i].Name)
		if ok && (cs.State.Running != nil || cs.State.Terminated != nil) {
			return true
		}
	}
	return false
}

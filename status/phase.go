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
// The per-container restart rules of newer releases (feature ContainerRestartRules) are not
// modelled: only the pod's restartPolicy counts.
func GetPhase(pod *v1.Pod, info []v1.ContainerStatus, podIsTerminal bool) v1.PodPhase {
	spec := &pod.Spec
	var (
		pendingInit, failedInit, pendingSidecars      int
		unknown, running, waiting, stopped, succeeded int
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
			if cs.State.Terminated.ExitCode != 0 {
				failedInit++
			}
		case cs.State.Waiting != nil:
			if last := cs.LastTerminationState.Terminated; last != nil {
				if last.ExitCode != 0 {
					failedInit++
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
		cs, ok := findStatus(info, spec.Containers[i].Name)
		switch {
		case !ok:
			unknown++
		case cs.State.Running != nil:
			running++
		case cs.State.Terminated != nil:
			stopped++
			if cs.State.Terminated.ExitCode == 0 {
				succeeded++
			}
		case cs.State.Waiting != nil:
			if cs.LastTerminationState.Terminated != nil {
				stopped++
			} else {
				waiting++
			}
		default:
			unknown++
		}
	}

	if failedInit > 0 && spec.RestartPolicy == v1.RestartPolicyNever {
		return v1.PodFailed
	}
	// Once a regular container has run, a restarting sidecar does not send the pod back to Pending.
	initialized := anyRegularContainerStarted(spec, info)
	switch {
	case pendingInit > 0, pendingSidecars > 0 && !initialized, waiting > 0:
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
		if spec.RestartPolicy == v1.RestartPolicyAlways {
			return v1.PodRunning
		}
		if stopped == succeeded {
			return v1.PodSucceeded
		}
		if spec.RestartPolicy == v1.RestartPolicyNever {
			return v1.PodFailed
		}
		return v1.PodRunning
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

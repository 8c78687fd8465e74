package syncloop

import (
	"sort"

	"k8s.io/apimachinery/pkg/types"

	"github.com/minikubelet/minikubelet/kubecontainer"
	"github.com/minikubelet/minikubelet/sim/trace"
)

// minDeadContainerInPod is how many dead instances of a container the container deletor keeps after
// a ContainerDied event, unless the pod's content should be removed.
const minDeadContainerInPod = 1

// cleanUpContainersInPod is the kubelet's reaction to ContainerDied: prune the dead instances of
// that container, keeping the newest one unless the pod's content should be removed.
func (l *Loop) cleanUpContainersInPod(uid types.UID, containerID string) {
	status, err := l.opts.Cache.Get(uid)
	if err != nil {
		return
	}
	l.deleteContainersInPod(uid, containerID, status, l.opts.Workers.ShouldPodContentBeRemoved(uid))
}

// deleteContainersInPod is the container deletor: it removes the exited instances of the container
// named by containerID (of every container when containerID is empty) beyond the newest
// minDeadContainerInPod, or all of them when removeAll is set.
func (l *Loop) deleteContainersInPod(uid types.UID, containerID string, status *kubecontainer.PodStatus, removeAll bool) {
	keep := minDeadContainerInPod
	if removeAll {
		keep = 0
	}
	for _, id := range containersToDelete(containerID, status, keep) {
		if err := l.opts.Runtime.RemoveContainer(id); err != nil {
			l.emit(trace.Event{Event: trace.KindError, UID: string(uid), Reason: "FailedToRemoveContainer", Message: err.Error(), Func: "deleteContainersInPod"})
		}
	}
}

// containersToDelete returns the IDs of the exited instances to remove, oldest last kept out: the
// kubelet's getContainersToDeleteInPod. An ID the status does not list selects nothing.
func containersToDelete(containerID string, status *kubecontainer.PodStatus, keep int) []string {
	if status == nil {
		return nil
	}
	var name string
	if containerID != "" {
		found := false
		for _, c := range status.ContainerStatuses {
			if c.ID == containerID {
				name, found = c.Name, true
				break
			}
		}
		if !found {
			return nil
		}
	}
	var candidates []kubecontainer.ContainerStatus
	for _, c := range status.ContainerStatuses {
		if c.State == kubecontainer.ContainerStateExited && (containerID == "" || c.Name == name) {
			candidates = append(candidates, c)
		}
	}
	if len(candidates) <= keep {
		return nil
	}
	sort.SliceStable(candidates, func(i, j int) bool { return candidates[i].CreatedAt.After(candidates[j].CreatedAt) })
	ids := make([]string, 0, len(candidates)-keep)
	for _, c := range candidates[keep:] {
		ids = append(ids, c.ID)
	}
	return ids
}

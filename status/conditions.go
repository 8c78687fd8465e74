package status

import (
	"fmt"
	"strings"

	v1 "k8s.io/api/core/v1"

	"github.com/minikubelet/minikubelet/kubecontainer"
)

// Condition reasons the kubelet sets, with the kubelet's values.
const (
	reasonUnknownContainerStatuses = "UnknownContainerStatuses"
	reasonPodCompleted             = "PodCompleted"
	reasonPodFailed                = "PodFailed"
	reasonContainersNotReady       = "ContainersNotReady"
	reasonContainersNotInitialized = "ContainersNotInitialized"
	reasonReadinessGatesNotReady   = "ReadinessGatesNotReady"
)

// ownedByKubelet reports whether the kubelet owns conditions of type t: it regenerates them on
// every sync and writes them over whatever the API holds.
func ownedByKubelet(t v1.PodConditionType) bool {
	switch t {
	case v1.PodScheduled, v1.PodReady, v1.PodInitialized, v1.ContainersReady,
		v1.PodReadyToStartContainers, v1.PodResizePending, v1.PodResizeInProgress:
		return true
	}
	return false
}

// sharedWithKubelet reports whether the kubelet may set conditions of type t that others also set.
func sharedWithKubelet(t v1.PodConditionType) bool {
	return t == v1.DisruptionTarget
}

// findCondition returns the index of the condition of type t in conditions and a pointer to it,
// or -1 and nil.
func findCondition(conditions []v1.PodCondition, t v1.PodConditionType) (int, *v1.PodCondition) {
	for i := range conditions {
		if conditions[i].Type == t {
			return i, &conditions[i]
		}
	}
	return -1, nil
}

// readyToStartContainersCondition is True once the pod has one ready sandbox, so that containers
// can start without a new sandbox: the kubelet's GeneratePodReadyToStartContainersCondition.
func readyToStartContainersCondition(pod *v1.Pod, rs *kubecontainer.PodStatus) v1.PodCondition {
	c := v1.PodCondition{Type: v1.PodReadyToStartContainers, ObservedGeneration: pod.Generation, Status: v1.ConditionFalse}
	if !sandboxNeeded(rs) {
		c.Status = v1.ConditionTrue
	}
	return c
}

// sandboxNeeded reports whether the runtime would have to create a sandbox before starting a
// container: none exists, more than one is ready, or the newest is not ready. Fake sandboxes have
// no network namespace or IP to lose, so the kubelet's other two reasons never apply.
func sandboxNeeded(rs *kubecontainer.PodStatus) bool {
	if len(rs.Sandboxes) == 0 {
		return true
	}
	ready, newest := 0, 0
	for i, sb := range rs.Sandboxes {
		if sb.State == kubecontainer.SandboxReady {
			ready++
		}
		if sb.CreatedAt.After(rs.Sandboxes[newest].CreatedAt) {
			newest = i
		}
	}
	return ready > 1 || rs.Sandboxes[newest].State != kubecontainer.SandboxReady
}

// initializedCondition is True once every init container completed (or, for a sidecar, started),
// or once any regular container ran: the kubelet's GeneratePodInitializedCondition.
func initializedCondition(pod *v1.Pod, statuses []v1.ContainerStatus, phase v1.PodPhase) v1.PodCondition {
	c := v1.PodCondition{Type: v1.PodInitialized, ObservedGeneration: pod.Generation, Status: v1.ConditionTrue}
	if statuses == nil && len(pod.Spec.InitContainers) > 0 {
		c.Status, c.Reason = v1.ConditionFalse, reasonUnknownContainerStatuses
		return c
	}
	var unknown, incomplete []string
	for i := range pod.Spec.InitContainers {
		ic := &pod.Spec.InitContainers[i]
		cs, ok := findStatus(statuses, ic.Name)
		if !ok {
			unknown = append(unknown, ic.Name)
			continue
		}
		done := cs.Ready
		if kubecontainer.IsRestartableInitContainer(ic) {
			done = cs.Started != nil && *cs.Started
		}
		if !done {
			incomplete = append(incomplete, ic.Name)
		}
	}
	if phase == v1.PodSucceeded && len(unknown) == 0 {
		c.Reason = reasonPodCompleted
		return c
	}
	if anyRegularContainerStarted(&pod.Spec, statuses) {
		return c
	}
	var msgs []string
	if len(unknown) > 0 {
		msgs = append(msgs, fmt.Sprintf("containers with unknown status: %v", unknown))
	}
	if len(incomplete) > 0 {
		msgs = append(msgs, fmt.Sprintf("containers with incomplete status: %v", incomplete))
	}
	if len(msgs) > 0 {
		c.Status, c.Reason, c.Message = v1.ConditionFalse, reasonContainersNotInitialized, strings.Join(msgs, ", ")
	}
	return c
}

// containersReadyCondition is True when every regular container and sidecar is ready: the
// kubelet's GenerateContainersReadyCondition.
func containersReadyCondition(pod *v1.Pod, statuses []v1.ContainerStatus, phase v1.PodPhase) v1.PodCondition {
	c := v1.PodCondition{Type: v1.ContainersReady, ObservedGeneration: pod.Generation, Status: v1.ConditionTrue}
	if statuses == nil {
		c.Status, c.Reason = v1.ConditionFalse, reasonUnknownContainerStatuses
		return c
	}
	var unknown, unready []string
	check := func(name string) {
		cs, ok := findStatus(statuses, name)
		switch {
		case !ok:
			unknown = append(unknown, name)
		case !cs.Ready:
			unready = append(unready, name)
		}
	}
	for i := range pod.Spec.InitContainers {
		if kubecontainer.IsRestartableInitContainer(&pod.Spec.InitContainers[i]) {
			check(pod.Spec.InitContainers[i].Name)
		}
	}
	for i := range pod.Spec.Containers {
		check(pod.Spec.Containers[i].Name)
	}
	if (phase == v1.PodSucceeded && len(unknown) == 0) || phase == v1.PodFailed {
		return terminalReadyCondition(v1.ContainersReady, pod.Generation, phase)
	}
	var msgs []string
	if len(unknown) > 0 {
		msgs = append(msgs, fmt.Sprintf("containers with unknown status: %v", unknown))
	}
	if len(unready) > 0 {
		msgs = append(msgs, fmt.Sprintf("containers with unready status: %v", unready))
	}
	if len(msgs) > 0 {
		c.Status, c.Reason, c.Message = v1.ConditionFalse, reasonContainersNotReady, strings.Join(msgs, ", ")
	}
	return c
}

// readyCondition is ContainersReady further gated by the pod's readiness gates: the kubelet's
// GeneratePodReadyCondition.
func readyCondition(pod *v1.Pod, conditions []v1.PodCondition, statuses []v1.ContainerStatus, phase v1.PodPhase) v1.PodCondition {
	cr := containersReadyCondition(pod, statuses, phase)
	c := v1.PodCondition{Type: v1.PodReady, ObservedGeneration: pod.Generation, Status: cr.Status, Reason: cr.Reason, Message: cr.Message}
	if cr.Status != v1.ConditionTrue {
		return c
	}
	var msgs []string
	for _, rg := range pod.Spec.ReadinessGates {
		_, gc := findCondition(conditions, rg.ConditionType)
		switch {
		case gc == nil:
			msgs = append(msgs, fmt.Sprintf("corresponding condition of pod readiness gate %q does not exist.", string(rg.ConditionType)))
		case gc.Status != v1.ConditionTrue:
			msgs = append(msgs, fmt.Sprintf("the status of pod readiness gate %q is not \"True\", but %v", string(rg.ConditionType), gc.Status))
		}
	}
	if len(msgs) > 0 {
		c.Status, c.Reason, c.Message = v1.ConditionFalse, reasonReadinessGatesNotReady, strings.Join(msgs, ", ")
	}
	return c
}

// terminalReadyCondition is the Ready or ContainersReady condition of a pod in a terminal phase.
func terminalReadyCondition(t v1.PodConditionType, generation int64, phase v1.PodPhase) v1.PodCondition {
	c := v1.PodCondition{Type: t, ObservedGeneration: generation, Status: v1.ConditionFalse}
	switch phase {
	case v1.PodFailed:
		c.Reason = reasonPodFailed
	case v1.PodSucceeded:
		c.Reason = reasonPodCompleted
	}
	return c
}

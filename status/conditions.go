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
	if msg := containersMessage(unknown, "incomplete", incomplete); msg != "" {
		c.Status, c.Reason, c.Message = v1.ConditionFalse, reasonContainersNotInitialized, msg
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
	for i := range pod.Spec.InitContainers {
		if ic := &pod.Spec.InitContainers[i]; kubecontainer.IsRestartableInitContainer(ic) {
			unknown, unready = checkReady(statuses, ic.Name, unknown, unready)
		}
	}
	for i := range pod.Spec.Containers {
		unknown, unready = checkReady(statuses, pod.Spec.Containers[i].Name, unknown, unready)
	}
	if (phase == v1.PodSucceeded && len(unknown) == 0) || phase == v1.PodFailed {
		return terminalReadyCondition(v1.ContainersReady, pod.Generation, phase)
	}
	if msg := containersMessage(unknown, "unready", unready); msg != "" {
		c.Status, c.Reason, c.Message = v1.ConditionFalse, reasonContainersNotReady, msg
	}
	return c
}

// checkReady adds the container name to unknown when statuses has none for it, or to unready when
// its status is not ready.
func checkReady(statuses []v1.ContainerStatus, name string, unknown, unready []string) ([]string, []string) {
	for i := range statuses {
		if statuses[i].Name == name {
			if !statuses[i].Ready {
				unready = append(unready, name)
			}
			return unknown, unready
		}
	}
	return append(unknown, name), unready
}

// containersMessage is the message of a condition that waits for containers: the kubelet's
// "containers with unknown status: [a b]", then (joined by ", ") "containers with <kind> status:
// [c]", each part only when it names a container; "" when neither does. The kubelet formats the
// lists with %v; this writes the same text without fmt, as the status of every pod that is not
// ready yet carries one, twice (Ready repeats ContainersReady's).
func containersMessage(unknown []string, kind string, others []string) string {
	if len(unknown) == 0 && len(others) == 0 {
		return ""
	}
	var b strings.Builder
	size := 2 * len("containers with unknown status: [], ")
	for _, n := range unknown {
		size += len(n) + 1
	}
	for _, n := range others {
		size += len(n) + 1
	}
	b.Grow(size) // one allocation for the message
	list := func(kind string, names []string) {
		if len(names) == 0 {
			return
		}
		if b.Len() > 0 {
			b.WriteString(", ")
		}
		b.WriteString("containers with ")
		b.WriteString(kind)
		b.WriteString(" status: [")
		for i, n := range names {
			if i > 0 {
				b.WriteByte(' ')
			}
			b.WriteString(n)
		}
		b.WriteByte(']')
	}
	list("unknown", unknown)
	list(kind, others)
	return b.String()
}

// readyCondition is ContainersReady further gated by the pod's readiness gates: the kubelet's
// GeneratePodReadyCondition.
func readyCondition(pod *v1.Pod, conditions []v1.PodCondition, statuses []v1.ContainerStatus, phase v1.PodPhase) v1.PodCondition {
	return readyConditionOf(pod, conditions, containersReadyCondition(pod, statuses, phase))
}

// readyConditionOf is readyCondition from the pod's ContainersReady condition cr, for a caller
// that sets both: the kubelet computes ContainersReady twice, and the second time builds its
// message and its lists of containers again.
func readyConditionOf(pod *v1.Pod, conditions []v1.PodCondition, cr v1.PodCondition) v1.PodCondition {
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

package events

import (
	"encoding/json"
	"fmt"

	v1 "k8s.io/api/core/v1"
)

// The messages of the resize events, as the v1.35 kubelet writes them (pkg/kubelet/events
// resize.go): a prefix, then a JSON summary of the pod's init and main containers' resources as
// the pod given has them, the generation, and the error if any.

// PodResizeCompletedMsg is ResizeCompleted's message for the allocated pod.
func PodResizeCompletedMsg(allocated *v1.Pod, generation int64) string {
	return podResizeMessage(allocated, generation, "", "Pod resize completed")
}

// PodResizeStartedMsg is ResizeStarted's message for the allocated pod.
func PodResizeStartedMsg(allocated *v1.Pod, generation int64) string {
	return podResizeMessage(allocated, generation, "", "Pod resize started")
}

// PodResizeErrorMsg is ResizeError's message, with the runtime's error.
func PodResizeErrorMsg(allocated *v1.Pod, generation int64, errorMsg string) string {
	return podResizeMessage(allocated, generation, errorMsg, "Pod resize error")
}

// PodResizePendingMsg is the message of ResizeDeferred and ResizeInfeasible for the desired pod.
func PodResizePendingMsg(pod *v1.Pod, reason, message string, generation int64) string {
	return podResizeMessage(pod, generation, message, "Pod resize "+reason)
}

type containerAllocation struct {
	Name      string                  `json:"name"`
	Resources v1.ResourceRequirements `json:"resources,omitempty"`
}

type podResourceSummary struct {
	InitContainers []containerAllocation `json:"initContainers,omitempty"`
	Containers     []containerAllocation `json:"containers,omitempty"`
	Generation     int64                 `json:"generation"`
	Error          string                `json:"error,omitempty"`
}

func podResizeMessage(pod *v1.Pod, generation int64, errorMsg, prefix string) string {
	sum := podResourceSummary{Generation: generation, Error: errorMsg}
	for _, c := range pod.Spec.InitContainers {
		sum.InitContainers = append(sum.InitContainers, containerAllocation{Name: c.Name, Resources: c.Resources})
	}
	for _, c := range pod.Spec.Containers {
		sum.Containers = append(sum.Containers, containerAllocation{Name: c.Name, Resources: c.Resources})
	}
	b, err := json.Marshal(sum)
	if err != nil {
		// The kubelet falls back to the bare prefix too.
		return prefix
	}
	return fmt.Sprintf("%s: %s", prefix, b)
}

package status

import v1 "k8s.io/api/core/v1"

// NeedToReconcilePodReadiness reports whether a pod with readiness gates shows a Ready condition
// that its own status no longer supports: the Ready condition the kubelet would generate from the
// pod's conditions (a readiness gate's condition set by someone else, say) and container statuses
// differs in status or message from the one it has. The kubelet's
// status.NeedToReconcilePodReadiness, which HandlePodReconcile asks to sync the pod at once
// instead of at its next resync.
func NeedToReconcilePodReadiness(pod *v1.Pod) bool {
	if len(pod.Spec.ReadinessGates) == 0 {
		return false
	}
	var statuses []v1.ContainerStatus
	if pod.Status.ContainerStatuses != nil {
		// GenerateContainersReadyCondition reads the regular containers' statuses, and the
		// sidecars' from the same status.
		statuses = append(append(statuses, pod.Status.ContainerStatuses...), pod.Status.InitContainerStatuses...)
	}
	want := readyCondition(pod, pod.Status.Conditions, statuses, pod.Status.Phase)
	_, cur := findCondition(pod.Status.Conditions, v1.PodReady)
	return cur != nil && (cur.Status != want.Status || cur.Message != want.Message)
}

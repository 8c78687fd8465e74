package admission

import (
	"testing"

	v1 "k8s.io/api/core/v1"
)

// TestPodRequestsPodLevel checks that the requests admission counts are the pod-level ones for
// cpu and memory when the pod sets them (resourcehelper.PodRequests, PodLevelResources on in
// v1.35), the containers' for the rest, and that preemption measures a pod the same way
// (GetResourceRequest), its overhead added only to a resource it requests.
func TestPodRequestsPodLevel(t *testing.T) {
	pod := testPod("p", ctr("a", rl("cpu", "100m", "memory", "64Mi", "ephemeral-storage", "1Gi")), ctr("b", rl("cpu", "100m")))
	pod.Spec.Resources = &v1.ResourceRequirements{Requests: rl("cpu", "2", "memory", "1Gi"), Limits: rl("cpu", "2", "memory", "1Gi")}
	pod.Spec.Overhead = rl("cpu", "50m")
	got := PodRequests(pod)
	for name, want := range map[v1.ResourceName]string{"cpu": "2050m", "memory": "1Gi", "ephemeral-storage": "1Gi"} {
		q := got[name]
		if q.String() != want {
			t.Errorf("PodRequests %s = %s, want %s", name, q.String(), want)
		}
	}
	if got := resourceRequest(pod, v1.ResourceCPU); got != 2050 {
		t.Errorf("resourceRequest cpu = %dm, want 2050m", got)
	}
	if got := resourceRequest(pod, v1.ResourceEphemeralStorage); got != 0 {
		t.Errorf("resourceRequest ephemeral-storage = %d, want 0: with pod-level resources the containers' are skipped", got)
	}
}

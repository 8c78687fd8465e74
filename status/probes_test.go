package status

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/minikubelet/minikubelet/sim/trace"
	"github.com/minikubelet/minikubelet/sim/vclock"
)

func TestSetContainerReadinessAndStartup(t *testing.T) {
	pod := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "default", UID: "uid-web"},
		Spec: v1.PodSpec{Containers: []v1.Container{{Name: "a"}, {Name: "b"}}}}
	running := v1.ContainerState{Running: &v1.ContainerStateRunning{}}
	notStarted := false
	m := newManager(t, Options{Clock: vclock.New(vclock.Epoch), Tracer: trace.Discard, PodManager: newFakePods(pod)})

	// Before the pod's first status nothing happens.
	m.SetContainerReadiness(pod.UID, "c-a", true)
	if _, ok := m.GetPodStatus(pod.UID); ok {
		t.Fatal("SetContainerReadiness created a status")
	}
	m.SetPodStatus(pod, v1.PodStatus{Phase: v1.PodRunning, ContainerStatuses: []v1.ContainerStatus{
		{Name: "a", ContainerID: "fake://c-a", State: running, Ready: false, Started: &notStarted},
		{Name: "b", ContainerID: "fake://c-b", State: running, Ready: true},
	}, Conditions: []v1.PodCondition{{Type: v1.PodReady, Status: v1.ConditionFalse}, {Type: v1.ContainersReady, Status: v1.ConditionFalse}}})

	condition := func(t v1.PodConditionType) v1.ConditionStatus {
		s, _ := m.GetPodStatus(pod.UID)
		_, c := findCondition(s.Conditions, t)
		return c.Status
	}
	m.SetContainerReadiness(pod.UID, "c-a", true)
	if condition(v1.PodReady) != v1.ConditionTrue || condition(v1.ContainersReady) != v1.ConditionTrue {
		t.Errorf("after a ready: Ready %s ContainersReady %s, want True True", condition(v1.PodReady), condition(v1.ContainersReady))
	}
	m.SetContainerReadiness(pod.UID, "c-b", false)
	s, _ := m.GetPodStatus(pod.UID)
	_, ready := findCondition(s.Conditions, v1.PodReady)
	if ready.Status != v1.ConditionFalse || ready.Message != "containers with unready status: [b]" {
		t.Errorf("after b not ready: Ready = %+v, want False naming b", ready)
	}
	m.SetContainerReadiness(pod.UID, "c-unknown", true) // no such instance: ignored
	m.SetContainerStartup(pod.UID, "c-a", true)
	s, _ = m.GetPodStatus(pod.UID)
	if c := s.ContainerStatuses[0]; c.Started == nil || !*c.Started {
		t.Errorf("started of a = %v, want true", c.Started)
	}
}

// TestHandedOutStatusesStayAsTheyWere checks what lets GetPodStatus hand out the cached status
// without a copy: every change the manager makes replaces the cached status, so a status handed
// out before is left as it was, whatever comes after.
func TestHandedOutStatusesStayAsTheyWere(t *testing.T) {
	pod := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "default", UID: "uid-web"},
		Spec: v1.PodSpec{Containers: []v1.Container{{Name: "a"}, {Name: "b"}}}}
	running := v1.ContainerState{Running: &v1.ContainerStateRunning{}}
	notStarted := false
	m := newManager(t, Options{Clock: vclock.New(vclock.Epoch), Tracer: trace.Discard, PodManager: newFakePods(pod)})
	m.SetPodStatus(pod, v1.PodStatus{Phase: v1.PodRunning, ContainerStatuses: []v1.ContainerStatus{
		{Name: "a", ContainerID: "fake://c-a", State: running, Ready: false, Started: &notStarted},
		{Name: "b", ContainerID: "fake://c-b", State: running, Ready: true},
	}, Conditions: []v1.PodCondition{{Type: v1.PodReady, Status: v1.ConditionFalse}, {Type: v1.ContainersReady, Status: v1.ConditionFalse}}})

	var handed []v1.PodStatus // every status handed out, and below, each as it was then
	var was []*v1.PodStatus
	look := func() {
		s, ok := m.GetPodStatus(pod.UID)
		if !ok {
			t.Fatal("GetPodStatus() found nothing")
		}
		handed, was = append(handed, s), append(was, s.DeepCopy())
	}
	look()
	m.SetContainerReadiness(pod.UID, "c-a", true)
	look()
	m.SetContainerStartup(pod.UID, "c-a", true)
	look()
	m.SetPodStatus(pod, v1.PodStatus{Phase: v1.PodRunning, Message: "again", ContainerStatuses: []v1.ContainerStatus{
		{Name: "a", ContainerID: "fake://c-a", State: running, Ready: true},
		{Name: "b", ContainerID: "fake://c-b", State: running, Ready: true},
	}})
	look()
	m.TerminatePod(pod)
	look()
	if got := handed[len(handed)-1]; got.Phase != v1.PodFailed || got.ContainerStatuses[0].State.Terminated == nil {
		t.Fatalf("last status = %s with a's state %+v, want Failed and terminated: the changes did not happen", got.Phase, got.ContainerStatuses[0].State)
	}
	for i := range handed {
		if diff := cmp.Diff(was[i], &handed[i]); diff != "" {
			t.Errorf("status handed out at look %d changed afterwards (-then +now):\n%s", i+1, diff)
		}
	}
}

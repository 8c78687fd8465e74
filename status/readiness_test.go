package status

import (
	"testing"

	v1 "k8s.io/api/core/v1"
)

// TestNeedToReconcilePodReadiness checks the kubelet's rule: only a pod with readiness gates and a
// Ready condition, whose status or message differs from what its conditions and containers give.
func TestNeedToReconcilePodReadiness(t *testing.T) {
	const gate = "example.com/lb-ready"
	notExist := `corresponding condition of pod readiness gate "example.com/lb-ready" does not exist.`
	ready := []v1.ContainerStatus{{Name: "app", Ready: true}}
	for _, tt := range []struct {
		name       string
		gates      bool
		conditions []v1.PodCondition
		want       bool
	}{
		{"no gates", false, []v1.PodCondition{{Type: v1.PodReady, Status: v1.ConditionFalse}}, false},
		{"no Ready condition yet", true, []v1.PodCondition{{Type: gate, Status: v1.ConditionTrue}}, false},
		{"gate missing, Ready says so", true, []v1.PodCondition{{Type: v1.PodReady, Status: v1.ConditionFalse, Message: notExist}}, false},
		{"gate set True since", true, []v1.PodCondition{{Type: v1.PodReady, Status: v1.ConditionFalse, Message: notExist}, {Type: gate, Status: v1.ConditionTrue}}, true},
		{"gate set False since: the message differs", true, []v1.PodCondition{{Type: v1.PodReady, Status: v1.ConditionFalse, Message: notExist}, {Type: gate, Status: v1.ConditionFalse}}, true},
		{"Ready and gate agree", true, []v1.PodCondition{{Type: v1.PodReady, Status: v1.ConditionTrue}, {Type: gate, Status: v1.ConditionTrue}}, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			pod := newPod(v1.RestartPolicyAlways, "app")
			if tt.gates {
				pod.Spec.ReadinessGates = []v1.PodReadinessGate{{ConditionType: gate}}
			}
			pod.Status = v1.PodStatus{Phase: v1.PodRunning, Conditions: tt.conditions, ContainerStatuses: ready}
			if got := NeedToReconcilePodReadiness(pod); got != tt.want {
				t.Errorf("NeedToReconcilePodReadiness = %v, want %v", got, tt.want)
			}
		})
	}
}

package apidefaults_test

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/minikubelet/minikubelet/api/apidefaults"
)

func TestUpdatePodCondition(t *testing.T) {
	then := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	now := then.Add(time.Minute)
	old := v1.PodCondition{Type: v1.PodReady, Status: v1.ConditionTrue, LastTransitionTime: metav1.NewTime(then)}
	tests := []struct {
		name        string
		conditions  []v1.PodCondition
		set         v1.PodCondition
		wantChanged bool
		want        []v1.PodCondition
	}{
		{"added", nil, v1.PodCondition{Type: v1.PodReady, Status: v1.ConditionTrue}, true,
			[]v1.PodCondition{{Type: v1.PodReady, Status: v1.ConditionTrue, LastTransitionTime: metav1.NewTime(now)}}},
		{"unchanged keeps its time", []v1.PodCondition{old}, v1.PodCondition{Type: v1.PodReady, Status: v1.ConditionTrue}, false,
			[]v1.PodCondition{old}},
		{"status change moves the time", []v1.PodCondition{old}, v1.PodCondition{Type: v1.PodReady, Status: v1.ConditionFalse}, true,
			[]v1.PodCondition{{Type: v1.PodReady, Status: v1.ConditionFalse, LastTransitionTime: metav1.NewTime(now)}}},
		{"reason change keeps the time", []v1.PodCondition{old}, v1.PodCondition{Type: v1.PodReady, Status: v1.ConditionTrue, Reason: "R"}, true,
			[]v1.PodCondition{{Type: v1.PodReady, Status: v1.ConditionTrue, Reason: "R", LastTransitionTime: metav1.NewTime(then)}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			st := v1.PodStatus{Conditions: tt.conditions}
			if got := apidefaults.UpdatePodCondition(&st, tt.set, now); got != tt.wantChanged {
				t.Errorf("UpdatePodCondition() = %v, want %v", got, tt.wantChanged)
			}
			if diff := cmp.Diff(tt.want, st.Conditions); diff != "" {
				t.Errorf("conditions (-want +got):\n%s", diff)
			}
		})
	}
}

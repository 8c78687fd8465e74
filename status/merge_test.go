package status

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestMergePodStatusLeavesItsInputs checks that mergePodStatus writes into no slice of the
// statuses it merges, whose slices it shares with the status cache and the API's pod, in each
// of its branches (a terminal phase held back, a disruption condition sent now, the Ready
// conditions of a terminal pod turned false), and still merges what it should.
func TestMergePodStatusLeavesItsInputs(t *testing.T) {
	now := time.Date(2026, 11, 28, 12, 0, 0, 0, time.UTC)
	then := metav1.NewTime(now.Add(-time.Minute))
	cond := func(typ v1.PodConditionType, status v1.ConditionStatus) v1.PodCondition {
		return v1.PodCondition{Type: typ, Status: status, LastTransitionTime: then}
	}
	running := v1.ContainerStatus{Name: "c", Ready: true, State: v1.ContainerState{Running: &v1.ContainerStateRunning{StartedAt: then}}}
	api := v1.PodStatus{
		Phase:                 v1.PodRunning,
		Conditions:            []v1.PodCondition{cond("example.com/gate", v1.ConditionTrue), cond(v1.PodReady, v1.ConditionTrue)},
		ContainerStatuses:     []v1.ContainerStatus{running},
		ResourceClaimStatuses: []v1.PodResourceClaimStatus{{Name: "claim"}},
	}
	tests := []struct {
		name      string
		next      v1.PodStatus
		couldRun  bool
		wantPhase v1.PodPhase
		wantReady v1.ConditionStatus
	}{
		{
			name: "running",
			next: v1.PodStatus{Phase: v1.PodRunning, Conditions: []v1.PodCondition{cond(v1.PodReady, v1.ConditionTrue)},
				ContainerStatuses: []v1.ContainerStatus{running}},
			wantPhase: v1.PodRunning, wantReady: v1.ConditionTrue,
		},
		{
			name: "terminal held back while containers could run",
			next: v1.PodStatus{Phase: v1.PodFailed, Conditions: []v1.PodCondition{cond(v1.PodReady, v1.ConditionTrue)},
				ContainerStatuses: []v1.ContainerStatus{running}},
			couldRun: true, wantPhase: v1.PodRunning, wantReady: v1.ConditionTrue,
		},
		{
			name: "terminal with a disruption condition",
			next: v1.PodStatus{Phase: v1.PodFailed, Conditions: []v1.PodCondition{
				cond(v1.PodReady, v1.ConditionTrue), cond(v1.DisruptionTarget, v1.ConditionTrue)},
				ContainerStatuses: []v1.ContainerStatus{running}},
			wantPhase: v1.PodFailed, wantReady: v1.ConditionFalse,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			old, next := *api.DeepCopy(), *tt.next.DeepCopy()
			merged := mergePodStatus(old, next, 0, tt.couldRun, now)
			if diff := cmp.Diff(api, old); diff != "" {
				t.Errorf("the API's status changed (-before +after):\n%s", diff)
			}
			if diff := cmp.Diff(tt.next, next); diff != "" {
				t.Errorf("the cached status changed (-before +after):\n%s", diff)
			}
			if merged.Phase != tt.wantPhase {
				t.Errorf("phase = %s, want %s", merged.Phase, tt.wantPhase)
			}
			if _, c := findCondition(merged.Conditions, v1.PodReady); c == nil || c.Status != tt.wantReady {
				t.Errorf("Ready condition = %+v, want status %s", c, tt.wantReady)
			}
			if _, c := findCondition(merged.Conditions, "example.com/gate"); c == nil {
				t.Error("the API's own condition was not kept")
			}
			if diff := cmp.Diff(api.ResourceClaimStatuses, merged.ResourceClaimStatuses); diff != "" {
				t.Errorf("resource claim statuses are not the API's (-want +got):\n%s", diff)
			}
		})
	}
}

// TestMergePodStatusTerminalReadyConditions: a terminal phase with either ready condition true
// sets both false as v1.35's mergePodStatus does (UpdatePodCondition each: a condition already
// false keeps its transition time and gets the reason, a missing one is appended), observing the
// API pod's generation; with neither true, nothing changes.
func TestMergePodStatusTerminalReadyConditions(t *testing.T) {
	now := time.Date(2026, 11, 28, 12, 0, 0, 0, time.UTC)
	then := metav1.NewTime(now.Add(-time.Minute))
	at := metav1.NewTime(now)
	const generation = 3
	cond := func(typ v1.PodConditionType, status v1.ConditionStatus, reason string, gen int64, ltt metav1.Time) v1.PodCondition {
		return v1.PodCondition{Type: typ, Status: status, Reason: reason, ObservedGeneration: gen, LastTransitionTime: ltt}
	}
	tests := []struct {
		name  string
		given []v1.PodCondition
		want  []v1.PodCondition
	}{
		{
			name:  "both true",
			given: []v1.PodCondition{cond(v1.ContainersReady, v1.ConditionTrue, "", 1, then), cond(v1.PodReady, v1.ConditionTrue, "", 1, then)},
			want: []v1.PodCondition{cond(v1.ContainersReady, v1.ConditionFalse, reasonPodCompleted, generation, at),
				cond(v1.PodReady, v1.ConditionFalse, reasonPodCompleted, generation, at)},
		},
		{
			name:  "containers ready, the pod held back by a readiness gate",
			given: []v1.PodCondition{cond(v1.ContainersReady, v1.ConditionTrue, "", 1, then), cond(v1.PodReady, v1.ConditionFalse, "ReadinessGatesNotReady", 1, then)},
			want: []v1.PodCondition{cond(v1.ContainersReady, v1.ConditionFalse, reasonPodCompleted, generation, at),
				cond(v1.PodReady, v1.ConditionFalse, reasonPodCompleted, generation, then)},
		},
		{
			name:  "the pod ready, no containers ready condition",
			given: []v1.PodCondition{cond(v1.PodReady, v1.ConditionTrue, "", 1, then)},
			want: []v1.PodCondition{cond(v1.PodReady, v1.ConditionFalse, reasonPodCompleted, generation, at),
				cond(v1.ContainersReady, v1.ConditionFalse, reasonPodCompleted, generation, at)},
		},
		{
			name:  "neither true",
			given: []v1.PodCondition{cond(v1.ContainersReady, v1.ConditionFalse, "ContainersNotReady", 1, then), cond(v1.PodReady, v1.ConditionFalse, "ContainersNotReady", 1, then)},
			want:  []v1.PodCondition{cond(v1.ContainersReady, v1.ConditionFalse, "ContainersNotReady", 1, then), cond(v1.PodReady, v1.ConditionFalse, "ContainersNotReady", 1, then)},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			old := v1.PodStatus{Phase: v1.PodRunning}
			next := v1.PodStatus{Phase: v1.PodSucceeded, Conditions: tt.given}
			merged := mergePodStatus(old, next, generation, false, now)
			if diff := cmp.Diff(tt.want, merged.Conditions); diff != "" {
				t.Errorf("conditions (-want +got):\n%s", diff)
			}
		})
	}
}

package status

import (
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/minikubelet/minikubelet/sim/vclock"
)

type statusMap map[types.UID]v1.PodStatus

func (m statusMap) GetPodStatus(uid types.UID) (v1.PodStatus, bool) {
	s, ok := m[uid]
	return s, ok
}

func TestActiveDeadlineShouldSync(t *testing.T) {
	start := metav1.NewTime(vclock.Epoch)
	deadline := int64(30)
	tests := []struct {
		name     string
		deadline *int64
		cached   *v1.PodStatus
		api      v1.PodStatus
		after    time.Duration
		want     bool
	}{
		{name: "no deadline", after: time.Hour, cached: &v1.PodStatus{StartTime: &start}},
		{name: "no start time", deadline: &deadline, after: time.Hour, cached: &v1.PodStatus{}},
		{name: "before the deadline", deadline: &deadline, after: 29 * time.Second, cached: &v1.PodStatus{StartTime: &start}},
		{name: "at the deadline", deadline: &deadline, after: 30 * time.Second, cached: &v1.PodStatus{StartTime: &start}, want: true},
		{name: "API start time when the status manager has none", deadline: &deadline, after: 31 * time.Second, api: v1.PodStatus{StartTime: &start}, want: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			statuses := statusMap{}
			pod := &v1.Pod{ObjectMeta: metav1.ObjectMeta{UID: "u"}, Spec: v1.PodSpec{ActiveDeadlineSeconds: tt.deadline}, Status: tt.api}
			if tt.cached != nil {
				statuses["u"] = *tt.cached
			}
			clk := vclock.New(vclock.Epoch.Add(tt.after))
			h, err := NewActiveDeadline(clk, statuses)
			if err != nil {
				t.Fatal(err)
			}
			if got := h.ShouldSync(pod); got != tt.want {
				t.Errorf("ShouldSync() = %v, want %v", got, tt.want)
			}
			// MaySync is the pod object's part of the answer: never false where ShouldSync
			// can be true, and false only without a deadline.
			if got, want := h.MaySync(pod), tt.deadline != nil; got != want {
				t.Errorf("MaySync() = %v, want %v", got, want)
			}
		})
	}
	if _, err := NewActiveDeadline(nil, statusMap{}); err == nil {
		t.Error("NewActiveDeadline(nil clock) error = nil, want an error")
	}
}

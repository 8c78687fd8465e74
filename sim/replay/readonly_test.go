package replay

import (
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// TestHandedOnCheck checks the guard of CheckReadOnlyPods: a pod changed after it was handed on
// is reported with the part that changed; an untouched pod, or one whose quantity only cached its
// string form on a read, is not.
func TestHandedOnCheck(t *testing.T) {
	newPod := func() *v1.Pod {
		return &v1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "default", UID: "u1"},
			Spec: v1.PodSpec{Containers: []v1.Container{{Name: "app", Resources: v1.ResourceRequirements{
				Requests: v1.ResourceList{v1.ResourceCPU: resource.MustParse("100m")},
			}}}},
		}
	}
	tests := []struct {
		name   string
		change func(*v1.Pod)
		want   string // a part of the error; "" for none
	}{
		{name: "untouched", change: func(*v1.Pod) {}},
		{name: "a quantity read", change: func(p *v1.Pod) {
			q := p.Spec.Containers[0].Resources.Requests[v1.ResourceCPU]
			_ = q.String()
			p.Spec.Containers[0].Resources.Requests[v1.ResourceCPU] = q
		}},
		{name: "spec", change: func(p *v1.Pod) { p.Spec.Containers[0].Image = "other" }, want: "[spec]"},
		{name: "metadata", change: func(p *v1.Pod) { p.Labels = map[string]string{"k": "v"} }, want: "[metadata]"},
		{name: "status", change: func(p *v1.Pod) { p.Status.Phase = v1.PodRunning }, want: "[status]"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := &handedOn{}
			p := newPod()
			h.add("node-1", 0, []*v1.Pod{p})
			tt.change(p)
			err := h.check()
			switch {
			case tt.want == "" && err != nil:
				t.Errorf("check() = %v, want nil", err)
			case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want) || !strings.Contains(err.Error(), "default/web")):
				t.Errorf("check() = %v, want an error naming default/web and %s", err, tt.want)
			}
		})
	}
}

// TestHandedOnStatuses checks the guard's statuses: a cached status changed after it was first
// seen is reported, an untouched one is not, and one seen again keeps its first copy.
func TestHandedOnStatuses(t *testing.T) {
	tests := []struct {
		name   string
		change func(*v1.PodStatus)
		want   bool
	}{
		{name: "untouched", change: func(*v1.PodStatus) {}},
		{name: "phase", change: func(s *v1.PodStatus) { s.Phase = v1.PodFailed }, want: true},
		{name: "a container status in the shared slice", change: func(s *v1.PodStatus) { s.ContainerStatuses[0].Ready = true }, want: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cached := &v1.PodStatus{Phase: v1.PodRunning, ContainerStatuses: []v1.ContainerStatus{{Name: "app"}}}
			each := func(f func(types.UID, *v1.PodStatus)) { f("u1", cached) }
			h := &handedOn{}
			h.addStatuses("node-1", 0, each)
			tt.change(cached)
			h.addStatuses("node-1", time.Second, each) // seen again: the first copy stands
			err := h.check()
			if got := err != nil; got != tt.want {
				t.Fatalf("check() = %v, want an error: %v", err, tt.want)
			}
			if tt.want && !strings.Contains(err.Error(), "UID u1") {
				t.Errorf("check() = %v, want it to name UID u1", err)
			}
		})
	}
}

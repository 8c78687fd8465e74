package status

import (
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// cachedRunning is a running pod's status as the Manager caches it: generated, normalized, with
// its resources.
func cachedRunning(t testing.TB) v1.PodStatus {
	t.Helper()
	pod := apiPod("web", "uid-web")
	s := runningStatus(pod, time.Unix(1000, 0))
	s.ContainerStatuses[0].AllocatedResources = v1.ResourceList{v1.ResourceCPU: resource.MustParse("100m")}
	normalizeStatus(pod, &s)
	return s
}

// TestEqualByKubelet checks the kubelet's isPodStatusByKubeletEqual on the cases it tells apart,
// and that the answer is the semantic equality's, whichever way the fields came to be equal.
func TestEqualByKubelet(t *testing.T) {
	for _, tc := range []struct {
		name   string
		change func(s *v1.PodStatus)
		want   bool
	}{
		{"the same status", func(*v1.PodStatus) {}, true},
		{"a deep copy", func(s *v1.PodStatus) { *s = *s.DeepCopy() }, true},
		{"a kubelet condition's transition time", func(s *v1.PodStatus) {
			s.Conditions[0].LastTransitionTime = metav1.NewTime(time.Unix(2000, 0))
		}, true},
		{"a kubelet condition's status", func(s *v1.PodStatus) { s.Conditions[0].Status = v1.ConditionFalse }, false},
		{"a condition the kubelet does not own, added", func(s *v1.PodStatus) {
			s.Conditions = append(s.Conditions, v1.PodCondition{Type: "example.com/gate", Status: v1.ConditionTrue})
		}, true},
		{"the same quantity written another way", func(s *v1.PodStatus) {
			s.ContainerStatuses[0].AllocatedResources = v1.ResourceList{v1.ResourceCPU: resource.MustParse("0.1")}
		}, true},
		{"the same instant in another location", func(s *v1.PodStatus) {
			t := s.StartTime.In(time.FixedZone("x", 3600))
			s.StartTime = &metav1.Time{Time: t}
		}, true},
		{"an empty list for none", func(s *v1.PodStatus) { s.InitContainerStatuses = []v1.ContainerStatus{} }, true},
		{"another phase", func(s *v1.PodStatus) { s.Phase = v1.PodSucceeded }, false},
		{"another restart count", func(s *v1.PodStatus) { s.ContainerStatuses[0].RestartCount++ }, false},
		{"another quantity", func(s *v1.PodStatus) {
			s.ContainerStatuses[0].AllocatedResources = v1.ResourceList{v1.ResourceCPU: resource.MustParse("200m")}
		}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			old := cachedRunning(t)
			next := cachedRunning(t)
			tc.change(&next)
			keep := *old.DeepCopy()
			if got := equalByKubelet(&old, &next); got != tc.want {
				t.Errorf("equalByKubelet() = %v, want %v", got, tc.want)
			}
			if !apiequality.Semantic.DeepEqual(keep, old) {
				t.Error("equalByKubelet changed the old status")
			}
		})
	}
}

// BenchmarkEqualByKubelet is the comparison every periodic SyncPod makes of the status it
// generated with the cached one, which are nearly always equal.
func BenchmarkEqualByKubelet(b *testing.B) {
	old, next := cachedRunning(b), cachedRunning(b)
	b.ReportAllocs()
	for b.Loop() {
		if !equalByKubelet(&old, &next) {
			b.Fatal("not equal")
		}
	}
}

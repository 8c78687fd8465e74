package kubelet

import (
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/types"
)

// TestDeferredResizeWaitsForTheActuatedShrink: on a 4-CPU node, "big" (3 CPUs) and "small" (1)
// run; small's resize to 1500m is deferred. big's resize down to 2 CPUs is allocated at once,
// but admission still counts big at the 3 CPUs its status shows, so small stays deferred. When
// big's status shows 2 CPUs (a status-only change, HandlePodReconcile), its requests shrank and
// the pending resize is retried: small's is allocated.
func TestDeferredResizeWaitsForTheActuatedShrink(t *testing.T) {
	e := newEnv(t, envOptions{standalone: true, noFileSource: true})
	e.settle()
	withCPU := func(name, spec, status string, generation int64) *v1.Pod {
		p := staticPod(name, types.UID("uid-"+name), v1.RestartPolicyAlways) // handed as an API pod
		p.Generation = generation
		p.Spec.Containers[0].Resources.Requests = v1.ResourceList{v1.ResourceCPU: resource.MustParse(spec)}
		p.Status.Phase = v1.PodRunning
		p.Status.ContainerStatuses = []v1.ContainerStatus{{Name: p.Spec.Containers[0].Name,
			Resources: &v1.ResourceRequirements{Requests: v1.ResourceList{v1.ResourceCPU: resource.MustParse(status)}}}}
		return p
	}
	allocated := func(p *v1.Pod) string {
		got, _ := e.k.Sync.Allocation.UpdatePodFromAllocation(p)
		return got.Spec.Containers[0].Resources.Requests.Cpu().String()
	}
	started := func() int {
		n := 0
		for _, ev := range e.events.list() {
			if strings.HasPrefix(ev, "Normal ResizeStarted ") {
				n++
			}
		}
		return n
	}
	e.apiPods(withCPU("big", "3", "3", 1), withCPU("small", "1", "1", 1))
	e.runFor(time.Minute) // past the first retry

	small := withCPU("small", "1500m", "1", 2)
	e.apiPods(withCPU("big", "3", "3", 1), small)
	e.runFor(time.Second)
	if got := allocated(small); got != "1" || !e.k.Sync.Allocation.HasPendingResizes() {
		t.Fatalf("small after its resize to 1500m beside big's 3 CPUs: allocated %s, pending %v; want 1, pending", got, e.k.Sync.Allocation.HasPendingResizes())
	}

	big := withCPU("big", "2", "3", 2)
	e.apiPods(big, small)
	e.runFor(time.Second)
	if got := allocated(big); got != "2" {
		t.Errorf("big's resize down allocated %s, want 2", got)
	}
	if got := allocated(small); got != "1" || started() != 1 {
		t.Errorf("small while big's status shows 3 CPUs: allocated %s, ResizeStarted %d; want 1, only big's", got, started())
	}

	e.apiPods(withCPU("big", "2", "2", 2), small) // big's status alone changed
	e.runFor(time.Second)
	if got := allocated(small); got != "1500m" || started() != 2 {
		t.Errorf("small once big's status shows 2 CPUs: allocated %s, ResizeStarted %d; want 1500m, 2", got, started())
	}
}

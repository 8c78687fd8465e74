package allocation

import (
	"maps"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	"github.com/minikubelet/minikubelet/kubecontainer"
	"github.com/minikubelet/minikubelet/test/podtest"
)

// mapOf is a pod's allocation as the kubelet keeps it, a map by container name.
func mapOf(a podAllocation) map[string]v1.ResourceRequirements {
	out := make(map[string]v1.ResourceRequirements, len(a))
	for _, c := range a {
		out[c.name] = c.resources
	}
	return out
}

// mapsOf is mapOf for every pod.
func mapsOf(allocated map[types.UID]podAllocation) map[types.UID]map[string]v1.ResourceRequirements {
	out := make(map[types.UID]map[string]v1.ResourceRequirements, len(allocated))
	for uid, a := range allocated {
		out[uid] = mapOf(a)
	}
	return out
}

// allocationsOf is allocationOf for every pod.
func allocationsOf(allocated map[types.UID]map[string]v1.ResourceRequirements) map[types.UID]podAllocation {
	out := make(map[types.UID]podAllocation, len(allocated))
	for uid, containers := range allocated {
		out[uid] = allocationOf(containers)
	}
	return out
}

// kubeletMap is the allocation SetAllocatedResources recorded before podAllocation, the kubelet's
// map: each main container's resources, then each sidecar's, deep-copied, the last of a name kept.
func kubeletMap(pod *v1.Pod) map[string]v1.ResourceRequirements {
	alloc := map[string]v1.ResourceRequirements{}
	for _, c := range pod.Spec.Containers {
		alloc[c.Name] = *c.Resources.DeepCopy()
	}
	for i := range pod.Spec.InitContainers {
		if c := &pod.Spec.InitContainers[i]; kubecontainer.IsRestartableInitContainer(c) {
			alloc[c.Name] = *c.Resources.DeepCopy()
		}
	}
	return alloc
}

// TestAllocationIsTheKubeletsMap checks that a pod's allocation holds what the kubelet's map by
// container name held (the last container of a name wins, plain init containers are left out),
// by name in increasing order, each name once, in a copy of the pod's resources; and that
// UpdatePodFromAllocation's lookup finds each.
func TestAllocationIsTheKubeletsMap(t *testing.T) {
	q := resource.MustParse
	res := func(cpu string) v1.ResourceRequirements {
		return v1.ResourceRequirements{Requests: v1.ResourceList{v1.ResourceCPU: q(cpu)}, Limits: v1.ResourceList{v1.ResourceMemory: q("1Gi")},
			Claims: []v1.ResourceClaim{{Name: "c-" + cpu}}}
	}
	ctr := func(name, cpu string) v1.Container {
		c := v1.Container{Name: name, Image: "busybox"}
		if cpu != "" {
			c.Resources = res(cpu)
		}
		return c
	}
	sidecar := func(name, cpu string) v1.Container {
		c := ctr(name, cpu)
		c.RestartPolicy = ptr.To(v1.ContainerRestartPolicyAlways)
		return c
	}
	tests := []struct {
		name       string
		containers []v1.Container
		init       []v1.Container
	}{
		{"no container", nil, nil},
		{"one without resources", []v1.Container{ctr("app", "")}, nil},
		{"one", []v1.Container{ctr("app", "1")}, nil},
		{"out of order", []v1.Container{ctr("zeta", "1"), ctr("alpha", "2"), ctr("mid", ""), ctr("", "3")}, nil},
		{"sidecars and plain init containers", []v1.Container{ctr("b", "1")}, []v1.Container{ctr("init", "5"), sidecar("c", "2"), sidecar("a", "3")}},
		{"a name twice", []v1.Container{ctr("x", "1"), ctr("y", "2"), ctr("x", "3")}, []v1.Container{sidecar("y", "4")}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pod := podtest.New("p", podtest.UID("uid-p"), podtest.Containers(tt.containers...))
			pod.Spec.InitContainers = tt.init
			e := newEnv(t, "2", pod)
			got := e.m.allocated[pod.UID]
			want := kubeletMap(pod)
			if diff := cmp.Diff(want, mapOf(got)); diff != "" {
				t.Errorf("allocation (-kubelet's map +got):\n%s", diff)
			}
			if len(got) != len(want) {
				t.Errorf("allocation has %d entries for %d names", len(got), len(want))
			}
			if !slices.IsSortedFunc(got, byName) {
				t.Errorf("allocation not in name order: %v", slices.Collect(maps.Keys(mapOf(got))))
			}
			for name, r := range want {
				a, ok := got.get(name)
				if !ok || !sameResources(a, &r) {
					t.Errorf("get(%q) = %v, %t, want %v", name, a, ok, r)
				}
			}
			if _, ok := got.get("missing"); ok {
				t.Errorf(`get("missing") found an allocation`)
			}
			// The allocation is a copy: the pod's resources written afterwards leave it alone.
			for i := range pod.Spec.Containers {
				if r := pod.Spec.Containers[i].Resources.Requests; r != nil {
					r[v1.ResourceCPU] = q("99")
				}
			}
			if diff := cmp.Diff(want, mapOf(got)); diff != "" {
				t.Errorf("allocation changed with the pod (-before +after):\n%s", diff)
			}
		})
	}
}

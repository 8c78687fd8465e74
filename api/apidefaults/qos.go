package apidefaults

import (
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

// QOSClass returns the pod's quality of service class from the cpu and memory requests and
// limits of its containers and init containers: the kubelet's v1qos.GetPodQOS (without pod-level
// resources). It reads the spec as given; API defaulting (requests copied from limits) is the
// caller's.
func QOSClass(pod *v1.Pod) v1.PodQOSClass {
	requests := v1.ResourceList{}
	limits := v1.ResourceList{}
	guaranteed := true
	add := func(list v1.ResourceList, name v1.ResourceName, q resource.Quantity) {
		if cur, ok := list[name]; ok {
			q.Add(cur)
		}
		list[name] = q
	}
	all := append(append([]v1.Container(nil), pod.Spec.InitContainers...), pod.Spec.Containers...)
	for i := range all {
		c := &all[i]
		for _, name := range []v1.ResourceName{v1.ResourceCPU, v1.ResourceMemory} {
			if q, ok := c.Resources.Requests[name]; ok && !q.IsZero() {
				add(requests, name, q.DeepCopy())
			}
		}
		found := 0
		for _, name := range []v1.ResourceName{v1.ResourceCPU, v1.ResourceMemory} {
			if q, ok := c.Resources.Limits[name]; ok && !q.IsZero() {
				found++
				add(limits, name, q.DeepCopy())
			}
		}
		if found < 2 {
			guaranteed = false
		}
	}
	if len(requests) == 0 && len(limits) == 0 {
		return v1.PodQOSBestEffort
	}
	if guaranteed {
		for name, req := range requests {
			if lim, ok := limits[name]; !ok || lim.Cmp(req) != 0 {
				guaranteed = false
				break
			}
		}
	}
	if guaranteed && len(requests) == len(limits) {
		return v1.PodQOSGuaranteed
	}
	return v1.PodQOSBurstable
}

package apidefaults

import (
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

// QOSClass returns the pod's quality of service class as the kubelet reads it: the class its
// status already carries (the API server sets it at creation), else ComputeQOSClass. The
// kubelet's v1qos.GetPodQOS.
func QOSClass(pod *v1.Pod) v1.PodQOSClass {
	if pod.Status.QOSClass != "" {
		return pod.Status.QOSClass
	}
	return ComputeQOSClass(pod)
}

// ComputeQOSClass computes the pod's quality of service class from its cpu and memory requests
// and limits: the pod-level ones when spec.resources is set (PodLevelResources, on in v1.35),
// else those of its containers and init containers. The kubelet's v1qos.ComputePodQOS. It reads
// the spec as given; API defaulting (requests copied from limits) is the caller's.
//
// BestEffort asks for nothing; Guaranteed has cpu and memory limits everywhere (at pod level, or
// on every container) and requests equal to them; anything else is Burstable.
func ComputeQOSClass(pod *v1.Pod) v1.PodQOSClass {
	requests := v1.ResourceList{}
	limits := v1.ResourceList{}
	guaranteed := true
	if res := pod.Spec.Resources; res != nil {
		addQOSResources(requests, res.Requests)
		if len(res.Limits) > 0 && addQOSResources(limits, res.Limits) < 2 {
			guaranteed = false
		}
	} else {
		// The containers, then the init containers, read in place: the status manager asks
		// for every status it generates, and a copy of the containers was most of the cost.
		for _, list := range [2][]v1.Container{pod.Spec.Containers, pod.Spec.InitContainers} {
			for i := range list {
				addQOSResources(requests, list[i].Resources.Requests)
				if addQOSResources(limits, list[i].Resources.Limits) < 2 {
					guaranteed = false
				}
			}
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

// addQOSResources adds the positive cpu and memory quantities of from to list, and returns how
// many of the two from has.
func addQOSResources(list, from v1.ResourceList) int {
	found := 0
	for _, name := range []v1.ResourceName{v1.ResourceCPU, v1.ResourceMemory} {
		q, ok := from[name]
		if !ok || q.Cmp(resource.Quantity{}) <= 0 {
			continue
		}
		found++
		q = q.DeepCopy()
		if cur, ok := list[name]; ok {
			q.Add(cur)
		}
		list[name] = q
	}
	return found
}

package apidefaults

import (
	"strings"

	v1 "k8s.io/api/core/v1"
	resourcehelper "k8s.io/component-helpers/resource"
)

// defaultPodLevelResources is the pod-level part of SetDefaults_Pod with PodLevelResources on
// (beta, on by default in v1.35): defaultHugePagePodLimits, then defaultPodRequests. Nothing
// happens unless spec.resources already sets something.
//
//   - A hugepages limit the containers set and the pod does not (neither as limit nor as
//     request) becomes a pod-level limit, the containers' aggregate.
//   - With pod-level limits, a cpu or memory request the pod does not set defaults to what the
//     containers request together (the larger of the init peak and the regular containers, as
//     the scheduler counts them), else, when no container requests it, to the pod-level limit;
//     a hugepages request defaults to its limit.
//
// So a pod whose only resources are `resources: {limits: {cpu: "2"}}` requests 2 cpus, which
// admission then counts.
func defaultPodLevelResources(pod *v1.Pod) {
	res := pod.Spec.Resources
	if res == nil || (len(res.Limits) == 0 && len(res.Requests) == 0) {
		return
	}
	// defaultHugePagePodLimits.
	limits := res.Limits
	if limits == nil {
		limits = v1.ResourceList{}
	}
	for name, q := range resourcehelper.AggregateContainerLimits(pod, resourcehelper.PodResourcesOptions{}) {
		if !resourcehelper.IsSupportedPodLevelResource(name) || !isHugePages(name) {
			continue
		}
		if _, ok := res.Requests[name]; ok {
			continue
		}
		if _, ok := limits[name]; !ok {
			limits[name] = q.DeepCopy()
		}
	}
	if len(limits) > 0 {
		res.Limits = limits
	}

	// defaultPodRequests.
	if len(res.Limits) == 0 {
		return
	}
	requests := res.Requests
	if requests == nil {
		requests = v1.ResourceList{}
	}
	for name, q := range resourcehelper.AggregateContainerRequests(pod, resourcehelper.PodResourcesOptions{}) {
		if _, ok := requests[name]; !ok && resourcehelper.IsSupportedPodLevelResource(name) && overcommitAllowed(name) {
			requests[name] = q.DeepCopy()
		}
	}
	for name, q := range res.Limits {
		if _, ok := requests[name]; !ok && resourcehelper.IsSupportedPodLevelResource(name) {
			requests[name] = q.DeepCopy()
		}
	}
	if len(requests) > 0 {
		res.Requests = requests
	}
}

// isHugePages is v1helper.IsHugePageResourceName.
func isHugePages(name v1.ResourceName) bool {
	return strings.HasPrefix(string(name), v1.ResourceHugePagesPrefix)
}

// overcommitAllowed is v1helper.IsOvercommitAllowed: a native resource (unprefixed, or under
// kubernetes.io/) other than hugepages.
func overcommitAllowed(name v1.ResourceName) bool {
	n := string(name)
	native := !strings.Contains(n, "/") || strings.Contains(n, v1.ResourceDefaultNamespacePrefix)
	return native && !isHugePages(name)
}
